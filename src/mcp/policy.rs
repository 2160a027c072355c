//! What an MCP call may reach: the directories it may name (allowed roots) and the most it may
//! ask an agent to do (the permission ceiling). Both are set by the person who runs the server
//! and bound every call, so a host whose model was talked into it by a prompt injection cannot
//! send an agent to `/etc` or ask for `unlimited`. `cli-agent-mcp run` is a person's own
//! command at their shell and is not bound by them.
//!
//! Paths are compared after resolving symlinks, so a link inside a root that points outside it
//! is outside. A path that does not exist yet (a file to be written) is resolved through its
//! deepest existing ancestor.

use std::io;
use std::path::{Path, PathBuf};

use cli_agent_engine::Permission;

/// The settings that name the roots, for messages.
const ROOTS_SETTING: &str = "--allow-root / CAM_ALLOWED_ROOTS";

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "`/` cannot be an allowed root ({ROOTS_SETTING}): it would let MCP calls reach every \
         directory (nor can a drive's root on Windows). Name the directories agents may work \
         in, e.g. your projects directory"
    )]
    RootIsSlash,
    #[error(
        "allowed root {} cannot be used ({ROOTS_SETTING}): {source}. Name an existing directory",
        .path.display()
    )]
    BadRoot { path: PathBuf, source: io::Error },
}

/// Why a call's arguments were refused.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(
        "{argument} {shown} is outside the directories this server allows MCP calls to use \
         ({roots}; set by {setting}). Pass a path inside one of them, or ask the person who \
         runs the server to add a root with {ROOTS_SETTING}"
    )]
    OutsideRoots {
        argument: &'static str,
        shown: String,
        /// The path with its symlinks resolved: where the call would reach.
        resolved: PathBuf,
        roots: String,
        setting: &'static str,
    },
    #[error(
        "{argument} {shown} is outside the call's workspace {}: pass a file inside it (a \
         relative path is taken from the workspace)",
        .workspace.display()
    )]
    OutsideWorkspace {
        argument: &'static str,
        shown: String,
        workspace: PathBuf,
    },
    #[error("{argument} {} is a directory: pass a file to append the answer to", .path.display())]
    NotAFile {
        argument: &'static str,
        path: PathBuf,
    },
    #[error("{argument} {} cannot be resolved: {source}. Pass an existing path", .path.display())]
    Unresolvable {
        argument: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(
        "permission {asked} is above what this server allows, {ceiling} (set by \
         CAM_MAX_PERMISSION / --max-permission). Ask for {ceiling} or less, or ask the person \
         who runs the server to raise it"
    )]
    AboveCeiling {
        asked: Permission,
        ceiling: Permission,
    },
}

impl Refusal {
    /// A bound the person who runs the server may lift for one call, if asked: a workspace
    /// outside the roots (an existing directory, never `/`, which no root may be) or a level
    /// above the ceiling. What their config names (an agent's writable directory) or a path
    /// that cannot be resolved is refused outright.
    pub fn person_may_allow(&self) -> bool {
        match self {
            Refusal::OutsideRoots {
                argument, resolved, ..
            } => *argument == "workspace" && resolved.parent().is_some() && resolved.is_dir(),
            Refusal::AboveCeiling { .. } => true,
            _ => false,
        }
    }

    /// The bound this call goes past, in words for the person asked to allow it.
    pub fn for_the_person(&self) -> String {
        match self {
            Refusal::OutsideRoots {
                argument,
                resolved,
                roots,
                ..
            } => format!(
                "its {argument} {} is outside the directories you allow ({roots})",
                resolved.display()
            ),
            Refusal::AboveCeiling { asked, ceiling } => {
                format!("it asks for permission {asked}, above your ceiling {ceiling}")
            }
            other => other.to_string(),
        }
    }
}

/// The bounds of every MCP call, fixed at start.
#[derive(Debug)]
pub struct Policy {
    roots: Vec<PathBuf>,
    /// Which setting chose the roots, for refusals.
    setting: &'static str,
    max_permission: Permission,
    /// Where a call without `workspace` runs: the server's working directory at start.
    default_workspace: Option<PathBuf>,
}

impl Policy {
    /// The roots given (all resolved; `/` refused), or by default the server's working
    /// directory and the user's home, whichever exist and are not `/`.
    pub fn new(given: &[PathBuf], max_permission: Permission) -> Result<Self, PolicyError> {
        let default_workspace = std::env::current_dir().ok();
        // `CAM_ALLOWED_ROOTS=""` or a stray `::` names no root.
        let given: Vec<_> = given
            .iter()
            .filter(|path| !path.as_os_str().is_empty())
            .cloned()
            .collect();
        let (roots, setting) = if given.is_empty() {
            let home_var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
            let home = std::env::var_os(home_var).filter(|home| !home.is_empty());
            let candidates = default_workspace
                .iter()
                .cloned()
                .chain(home.map(PathBuf::from));
            (
                default_roots(candidates),
                "the default: the server's directory and home",
            )
        } else {
            (explicit_roots(&given)?, ROOTS_SETTING)
        };
        Ok(Self {
            roots,
            setting,
            max_permission,
            default_workspace,
        })
    }

    pub fn default_workspace(&self) -> Option<&Path> {
        self.default_workspace.as_deref()
    }

    /// The roots, for messages and the start-up log.
    pub fn describe_roots(&self) -> String {
        if self.roots.is_empty() {
            return "none".to_owned();
        }
        let roots: Vec<_> = self
            .roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        roots.join(", ")
    }

    pub fn max_permission(&self) -> Permission {
        self.max_permission
    }

    /// `path`, resolved, if it lies inside an allowed root. `argument` names it in a refusal.
    pub fn resolve_inside_roots(
        &self,
        argument: &'static str,
        path: &Path,
    ) -> Result<PathBuf, Refusal> {
        let resolved = resolve(path).map_err(|source| Refusal::Unresolvable {
            argument,
            path: path.to_path_buf(),
            source,
        })?;
        if self.roots.iter().any(|root| resolved.starts_with(root)) {
            return Ok(resolved);
        }
        let shown = if resolved == path {
            path.display().to_string()
        } else {
            format!("{} (resolved: {})", path.display(), resolved.display())
        };
        Err(Refusal::OutsideRoots {
            argument,
            shown,
            resolved,
            roots: self.describe_roots(),
            setting: self.setting,
        })
    }

    /// A call's workspace, resolved. One outside the roots that the person may allow comes
    /// with its refusal, to ask them.
    pub fn resolve_workspace(&self, path: &Path) -> Result<(PathBuf, Option<Refusal>), Refusal> {
        match self.resolve_inside_roots("workspace", path) {
            Ok(resolved) => Ok((resolved, None)),
            Err(refusal) => match &refusal {
                Refusal::OutsideRoots { resolved, .. } if refusal.person_may_allow() => {
                    let resolved = resolved.clone();
                    Ok((resolved, Some(refusal)))
                }
                _ => Err(refusal),
            },
        }
    }

    /// A file argument: relative paths start at `workspace` (already resolved), and the file
    /// must lie inside it once symlinks are resolved; it need not exist yet.
    pub fn resolve_inside_workspace(
        argument: &'static str,
        path: &Path,
        workspace: &Path,
    ) -> Result<PathBuf, Refusal> {
        // Compared with what `resolve` gives, in the same form whoever resolved it.
        let workspace = cli_agent_engine::plain_path::plain_form(workspace);
        let workspace = workspace.as_path();
        let joined = workspace.join(path);
        if joined.is_symlink() && !joined.exists() {
            // A dangling link: creating the file would follow it wherever it points.
            return Err(Refusal::OutsideWorkspace {
                argument,
                shown: format!("{} (a symlink to nothing)", path.display()),
                workspace: workspace.to_path_buf(),
            });
        }
        let resolved = resolve(&joined).map_err(|source| Refusal::Unresolvable {
            argument,
            path: path.to_path_buf(),
            source,
        })?;
        if !resolved.starts_with(workspace) || resolved == workspace {
            let shown = if resolved == joined {
                path.display().to_string()
            } else {
                format!("{} (resolved: {})", path.display(), resolved.display())
            };
            return Err(Refusal::OutsideWorkspace {
                argument,
                shown,
                workspace: workspace.to_path_buf(),
            });
        }
        if resolved.is_dir() {
            return Err(Refusal::NotAFile {
                argument,
                path: resolved,
            });
        }
        Ok(resolved)
    }

    pub fn check_permission(&self, asked: Permission) -> Result<(), Refusal> {
        if asked > self.max_permission {
            return Err(Refusal::AboveCeiling {
                asked,
                ceiling: self.max_permission,
            });
        }
        Ok(())
    }
}

fn explicit_roots(given: &[PathBuf]) -> Result<Vec<PathBuf>, PolicyError> {
    let mut roots = Vec::with_capacity(given.len());
    for path in given {
        let root = cli_agent_engine::plain_path::canonicalize(path).map_err(|source| {
            PolicyError::BadRoot {
                path: path.clone(),
                source,
            }
        })?;
        if root.parent().is_none() {
            return Err(PolicyError::RootIsSlash);
        }
        if !root.is_dir() {
            let source = io::Error::new(io::ErrorKind::NotADirectory, "not a directory");
            return Err(PolicyError::BadRoot {
                path: path.clone(),
                source,
            });
        }
        if !roots.contains(&root) {
            roots.push(root);
        }
    }
    Ok(roots)
}

fn default_roots(candidates: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for candidate in candidates {
        match cli_agent_engine::plain_path::canonicalize(&candidate) {
            Ok(root) if root.parent().is_none() => {
                tracing::warn!(
                    path = %candidate.display(),
                    "`/` is never an allowed root: MCP calls may not work there (see --allow-root)"
                );
            }
            Ok(root) if !roots.contains(&root) => roots.push(root),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(path = %candidate.display(), %error, "not an allowed root");
            }
        }
    }
    roots
}

/// `path` with every symlink resolved; a part that does not exist yet is kept as named below
/// its deepest existing ancestor. `..` in such a part cannot be resolved and is refused.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    match cli_agent_engine::plain_path::canonicalize(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(error);
            };
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            Ok(resolve(parent)?.join(name))
        }
        resolved => resolved,
    }
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    use std::os::unix::fs::symlink;
    // Every link these tests make points to a directory (or where one would be).
    #[cfg(windows)]
    use std::os::windows::fs::symlink_dir as symlink;

    use super::*;

    /// `root/inside` and `outside` in a directory of the test's own under the temp dir, which
    /// `base` names by its real path (no symlink on the way); removed when dropped.
    struct Dirs {
        base: PathBuf,
        _dir: tempfile::TempDir,
    }

    impl Dirs {
        fn new(name: &str) -> Self {
            let dir = cli_agent_test_support::common::temp_dir(&format!("cam-policy-{name}"));
            let base = cli_agent_engine::plain_path::canonicalize(dir.path()).unwrap();
            std::fs::create_dir_all(base.join("root/inside")).unwrap();
            std::fs::create_dir_all(base.join("outside")).unwrap();
            Self { base, _dir: dir }
        }

        fn policy(&self) -> Policy {
            Policy::new(&[self.base.join("root")], Permission::WorkspaceWrite).unwrap()
        }
    }

    fn refusal(policy: &Policy, path: &Path) -> String {
        let refused = policy.resolve_inside_roots("workspace", path);
        refused.expect_err("outside the roots").to_string()
    }

    #[test]
    fn a_path_inside_a_root_resolves_and_one_outside_is_refused_naming_path_roots_and_setting() {
        let dirs = Dirs::new("inside");
        let policy = dirs.policy();
        let inside = dirs.base.join("root/inside");
        assert_eq!(
            policy.resolve_inside_roots("workspace", &inside).unwrap(),
            inside
        );
        let outside = dirs.base.join("outside");
        let error = refusal(&policy, &outside);
        assert!(error.contains(&outside.display().to_string()), "{error}");
        assert!(
            error.contains(&dirs.base.join("root").display().to_string()),
            "{error}"
        );
        assert!(error.contains("CAM_ALLOWED_ROOTS"), "{error}");
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "links: Windows makes them with Developer Mode only, and Wine's are not followed by canonicalize"
    )]
    fn a_file_argument_must_stay_inside_the_workspace() {
        let dirs = Dirs::new("file");
        let workspace = dirs.base.join("root/inside");
        let inside =
            |path: &str| Policy::resolve_inside_workspace("save_to", Path::new(path), &workspace);
        assert_eq!(
            inside("notes/answer.md").unwrap(),
            workspace.join("notes/answer.md")
        );
        assert_eq!(
            inside(&workspace.join("a.md").display().to_string()).unwrap(),
            workspace.join("a.md")
        );
        symlink(
            dirs.base.join("outside/nothing-yet"),
            workspace.join("dangling"),
        )
        .unwrap();
        symlink(dirs.base.join("outside"), workspace.join("out")).unwrap();
        for escape in ["../a.md", "/etc/passwd", "dangling", "out/a.md", "."] {
            let error = inside(escape).expect_err(escape).to_string();
            assert!(error.contains("save_to"), "{error}");
        }
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "links: Windows makes them with Developer Mode only, and Wine's are not followed by canonicalize"
    )]
    fn a_symlink_is_judged_by_where_it_points() {
        let dirs = Dirs::new("symlink");
        let policy = dirs.policy();
        let escape = dirs.base.join("root/escape");
        symlink(dirs.base.join("outside"), &escape).unwrap();
        let error = refusal(&policy, &escape);
        assert!(error.contains("resolved: "), "{error}");
        let back_in = dirs.base.join("outside/back-in");
        symlink(dirs.base.join("root/inside"), &back_in).unwrap();
        assert!(policy.resolve_inside_roots("workspace", &back_in).is_ok());
    }

    #[test]
    fn a_path_that_does_not_exist_yet_is_judged_by_its_existing_ancestor() {
        let dirs = Dirs::new("missing");
        let policy = dirs.policy();
        let new_file = dirs.base.join("root/inside/new/answer.md");
        assert_eq!(
            policy.resolve_inside_roots("save_to", &new_file).unwrap(),
            new_file
        );
        let sneaky = dirs.base.join("root/missing/../../outside/x");
        assert!(policy.resolve_inside_roots("save_to", &sneaky).is_err());
        assert!(
            policy
                .resolve_inside_roots("save_to", Path::new("/no/such/dir"))
                .is_err()
        );
    }

    #[test]
    fn slash_and_missing_directories_are_refused_as_roots() {
        let slash = Policy::new(&[PathBuf::from("/")], Permission::ReadOnly).unwrap_err();
        assert!(matches!(slash, PolicyError::RootIsSlash), "{slash}");
        assert!(slash.to_string().contains("CAM_ALLOWED_ROOTS"));
        let dotdot = Policy::new(&[PathBuf::from("/tmp/..")], Permission::ReadOnly);
        assert!(matches!(dotdot, Err(PolicyError::RootIsSlash)));
        let missing = Policy::new(&[PathBuf::from("/no/such/root")], Permission::ReadOnly);
        assert!(matches!(missing, Err(PolicyError::BadRoot { .. })));
    }

    #[test]
    fn slash_is_never_a_default_root() {
        let roots = default_roots([PathBuf::from("/"), std::env::temp_dir()].into_iter());
        assert_eq!(
            roots,
            [cli_agent_engine::plain_path::canonicalize(&std::env::temp_dir()).unwrap()]
        );
    }

    #[test]
    fn the_person_may_lift_a_workspace_outside_the_roots_or_the_ceiling_but_never_slash() {
        let dirs = Dirs::new("liftable");
        let policy = dirs.policy();
        let outside = dirs.base.join("outside");
        let (resolved, beyond) = policy.resolve_workspace(&outside).unwrap();
        assert_eq!(resolved, outside);
        let beyond = beyond.expect("outside the roots");
        assert!(
            beyond
                .for_the_person()
                .contains("outside the directories you allow")
        );
        let inside = dirs.base.join("root/inside");
        assert!(matches!(policy.resolve_workspace(&inside), Ok((_, None))));
        assert!(policy.resolve_workspace(Path::new("/")).is_err());
        assert!(policy.resolve_workspace(Path::new("/no/such/dir")).is_err());
        let writable = policy.resolve_inside_roots("the agent's writable directory", &outside);
        assert!(!writable.unwrap_err().person_may_allow());
        let above = policy.check_permission(Permission::Unlimited).unwrap_err();
        assert!(above.person_may_allow());
    }

    #[test]
    fn a_permission_above_the_ceiling_is_refused_naming_the_setting() {
        let dirs = Dirs::new("ceiling");
        let policy = dirs.policy();
        assert!(policy.check_permission(Permission::ReadOnly).is_ok());
        assert!(policy.check_permission(Permission::WorkspaceWrite).is_ok());
        let error = policy
            .check_permission(Permission::Unlimited)
            .unwrap_err()
            .to_string();
        assert!(error.contains("CAM_MAX_PERMISSION"), "{error}");
        assert!(error.contains("unlimited"), "{error}");
    }
}
