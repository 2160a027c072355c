//! What doctor says about the kernel sandbox: the kernel's Landlock, the `--sandbox` mode in
//! effect, what that means for runs on this kernel, and what each permission level enforces.

use cli_agent_engine::Permission;
use cli_agent_engine::sandbox::{KernelSupport, SandboxMode};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct SandboxReport {
    /// The kernel's Landlock as the engine sees it, e.g. "Landlock ABI 7".
    pub kernel: String,
    /// Why the kernel cannot confine, and how to get one that can.
    pub missing: Option<&'static str>,
    pub mode: SandboxMode,
    /// What the mode does on this kernel.
    pub effect: Effect,
    pub levels: Vec<LevelReport>,
}

/// What happens to a `read-only` or `workspace-write` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Confined,
    /// `--sandbox off`, or `auto` on a kernel without Landlock: each CLI's own flags only.
    NotConfined,
    /// `required` on a kernel without Landlock.
    Refused,
}

#[derive(Debug, Serialize)]
pub struct LevelReport {
    pub level: Permission,
    pub enforces: &'static str,
}

impl SandboxReport {
    pub fn new(mode: SandboxMode, support: KernelSupport) -> Self {
        let effect = match (mode, support.is_available()) {
            (SandboxMode::Off, _) => Effect::NotConfined,
            (_, true) => Effect::Confined,
            (SandboxMode::Required, false) => Effect::Refused,
            (SandboxMode::Auto, false) => Effect::NotConfined,
        };
        Self {
            kernel: support.to_string(),
            missing: support.missing_reason(),
            mode,
            effect,
            levels: [
                Permission::ReadOnly,
                Permission::WorkspaceWrite,
                Permission::Unlimited,
            ]
            .into_iter()
            .map(|level| LevelReport {
                level,
                enforces: enforces(level),
            })
            .collect(),
        }
    }

    /// The report's text: a headline, the missing reason if any, one line per level.
    pub fn render(&self) -> String {
        let effect = match self.effect {
            Effect::Confined => "read-only and workspace-write runs are confined",
            Effect::NotConfined => "runs are not confined: each CLI's own flags are the only bound",
            Effect::Refused => "read-only and workspace-write runs are refused",
        };
        let mut out = format!(
            "sandbox: {}, --sandbox {}: {effect}\n",
            self.kernel, self.mode
        );
        if let Some(missing) = self.missing {
            out.push_str(&format!("          {missing}\n"));
        }
        for level in &self.levels {
            out.push_str(&format!(
                "  {:<16} {}\n",
                level.level.name(),
                level.enforces
            ));
        }
        out
    }
}

/// Where a run at `level` may write under the sandbox (reads are never restricted); on
/// Windows, which has none the server can apply, what bounds it instead.
fn enforces(level: Permission) -> &'static str {
    if cfg!(windows) {
        return windows_bound(level);
    }
    match level {
        Permission::ReadOnly => {
            "writes only to the CLI's own state dirs and a private temp dir (and the device files)"
        }
        Permission::WorkspaceWrite => {
            "the same, plus the workspace (an isolated run's worktree and its git metadata) \
             and a custom agent's `writable` dirs"
        }
        Permission::Unlimited => "not confined",
    }
}

/// What bounds a run at `level` on Windows: the CLI itself, never the OS.
fn windows_bound(level: Permission) -> &'static str {
    match level {
        Permission::ReadOnly => {
            "no kernel sandbox on Windows: the CLI's own read-only mode is the only bound \
             (codex applies its own Windows sandbox; the others their permission flags)"
        }
        Permission::WorkspaceWrite => {
            "no kernel sandbox on Windows: the CLI's own workspace-write mode is the only bound \
             (codex applies its own Windows sandbox; the others their permission flags)"
        }
        Permission::Unlimited => "not confined",
    }
}
