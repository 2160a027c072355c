//! What the running OS offers to confine a run, asked once per process: Landlock on Linux,
//! Seatbelt (`sandbox-exec`) on macOS, nothing on Windows.

/// The kernel sandbox on this OS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSupport {
    /// Landlock works; the kernel's ABI version (1 came with Linux 5.13).
    Landlock {
        /// The ABI version.
        abi: i32,
    },
    /// Landlock is built in but not enabled at boot (not in the `lsm=` list).
    LandlockDisabled,
    /// Landlock is not built into this kernel.
    NoLandlock,
    /// macOS's Seatbelt, through `/usr/bin/sandbox-exec`.
    Seatbelt,
    /// macOS without `/usr/bin/sandbox-exec`.
    NoSeatbelt,
    /// Windows: no kernel sandbox the server can apply to an arbitrary CLI.
    NoWindowsSandbox,
}

impl KernelSupport {
    /// Whether it can confine a run.
    pub fn is_available(self) -> bool {
        matches!(self, Self::Landlock { .. } | Self::Seatbelt)
    }

    /// Why the OS cannot confine, and how to get one that can.
    pub fn missing_reason(self) -> Option<&'static str> {
        match self {
            Self::Landlock { .. } | Self::Seatbelt => None,
            Self::LandlockDisabled => Some(
                "the kernel has Landlock but it is not enabled: add `landlock` to the `lsm=` \
                 boot parameter (see /sys/kernel/security/lsm)",
            ),
            Self::NoLandlock => Some(
                "the kernel has no Landlock: it needs Linux 5.13 or newer built with \
                 CONFIG_SECURITY_LANDLOCK (most distributions since 2022)",
            ),
            Self::NoSeatbelt => Some(
                "/usr/bin/sandbox-exec, macOS's Seatbelt, is missing: it ships with every \
                 macOS since 10.5; restore it from the system, or run with --sandbox off",
            ),
            Self::NoWindowsSandbox => Some(
                "Windows has no kernel sandbox the server can apply to a CLI (no Landlock or \
                 Seatbelt): each CLI's own permission flags are the only bound; run with \
                 --sandbox auto or off",
            ),
        }
    }
}

impl std::fmt::Display for KernelSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Landlock { abi } => write!(f, "Landlock ABI {abi}"),
            Self::LandlockDisabled => f.write_str("Landlock not enabled"),
            Self::NoLandlock => f.write_str("no Landlock"),
            Self::Seatbelt => f.write_str("Seatbelt (sandbox-exec)"),
            Self::NoSeatbelt => f.write_str("no Seatbelt"),
            Self::NoWindowsSandbox => f.write_str("no kernel sandbox (Windows)"),
        }
    }
}

/// The OS refused to build a run's sandbox.
#[derive(Debug, thiserror::Error)]
#[error(
    "could not build the {sandbox} rules of the run: {reason}; set --sandbox off to run unconfined"
)]
pub struct BuildError {
    /// The OS's sandbox, by name.
    pub sandbox: &'static str,
    /// Why the OS refused.
    pub reason: String,
}
