//! What the running kernel offers: the Landlock ABI version, asked once per process.

use std::sync::OnceLock;

/// Landlock on the running kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSupport {
    /// Landlock works; the kernel's ABI version (1 came with Linux 5.13).
    Landlock { abi: i32 },
    /// Built in but not enabled at boot (not in the `lsm=` list).
    NotEnabled,
    /// Not built into this kernel, or not Linux.
    NotBuilt,
}

impl KernelSupport {
    /// The running kernel's, asked once.
    pub fn current() -> Self {
        static CURRENT: OnceLock<KernelSupport> = OnceLock::new();
        *CURRENT.get_or_init(probe)
    }

    pub fn is_available(self) -> bool {
        matches!(self, Self::Landlock { .. })
    }

    /// Why the kernel cannot confine, and how to get a kernel that can.
    pub fn missing_reason(self) -> Option<&'static str> {
        match self {
            Self::Landlock { .. } => None,
            Self::NotEnabled => Some(
                "the kernel has Landlock but it is not enabled: add `landlock` to the `lsm=` \
                 boot parameter (see /sys/kernel/security/lsm)",
            ),
            Self::NotBuilt => Some(
                "the kernel has no Landlock: it needs Linux 5.13 or newer built with \
                 CONFIG_SECURITY_LANDLOCK (most distributions since 2022)",
            ),
        }
    }
}

impl std::fmt::Display for KernelSupport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Landlock { abi } => write!(f, "Landlock ABI {abi}"),
            Self::NotEnabled => f.write_str("Landlock not enabled"),
            Self::NotBuilt => f.write_str("no Landlock"),
        }
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI version, or
/// EOPNOTSUPP (disabled) / ENOSYS (absent). The `landlock` crate keeps this query private.
#[cfg(target_os = "linux")]
fn probe() -> KernelSupport {
    const VERSION: nix::libc::c_uint = 1;
    // SAFETY: a null attribute pointer with size 0 is the documented form of this query.
    let abi = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_landlock_create_ruleset,
            std::ptr::null::<nix::libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    match abi {
        abi if abi > 0 => KernelSupport::Landlock { abi: abi as i32 },
        _ if std::io::Error::last_os_error().raw_os_error() == Some(nix::libc::EOPNOTSUPP) => {
            KernelSupport::NotEnabled
        }
        _ => KernelSupport::NotBuilt,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> KernelSupport {
    KernelSupport::NotBuilt
}
