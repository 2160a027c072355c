//! A directory only this user may open, as mode 0700 makes one on Unix: a protected DACL
//! (nothing inherited from the parent) giving full access to the user and to SYSTEM, inherited
//! by everything made in it. A directory under the user's profile needs none (the profile's
//! ACL is the user's already); one elsewhere (`CAM_STATE_DIR=D:\agents`) would otherwise
//! inherit whatever its parent allows.

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, HLOCAL, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    DACL_SECURITY_INFORMATION, GetTokenInformation, PROTECTED_DACL_SECURITY_INFORMATION,
    PSECURITY_DESCRIPTOR, SetFileSecurityW, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// Gives `dir` the private DACL: the user's and SYSTEM's alone, protected, inherited.
pub fn make_private(dir: &Path) -> io::Result<()> {
    let sddl = private_sddl(&current_user_sid()?);
    let descriptor = Descriptor::from_sddl(&sddl)?;
    let path = wide(dir.as_os_str());
    let what = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
    // SAFETY: `path` is NUL-terminated and `descriptor` a valid self-relative descriptor that
    // outlives the call.
    let set = unsafe { SetFileSecurityW(path.as_ptr(), what, descriptor.0) };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The descriptor's text: `P`rotected; `A`llow, inherited by files (`OI`) and dirs (`CI`),
/// `F`ile `A`ll access, to the user and to `SY`stem.
fn private_sddl(user_sid: &str) -> String {
    format!("D:P(A;OICI;FA;;;{user_sid})(A;OICI;FA;;;SY)")
}

/// This process's user, as a SID string (`S-1-5-21-…`).
fn current_user_sid() -> io::Result<String> {
    let token = Token::of_this_process()?;
    let mut needed = 0;
    // SAFETY: asking for the size only (no buffer), as the API's two-call pattern wants.
    unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &mut needed) };
    // u64s: aligned for TOKEN_USER, whose SID the token information carries after it.
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
    // SAFETY: `buffer` holds `needed` bytes, and the token is open for TOKEN_QUERY.
    let got = unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        )
    };
    if got == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on success the buffer starts with a TOKEN_USER, aligned (u64 buffer).
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` points into `buffer`, alive here; the string is ours to LocalFree.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let _free = Local(text.cast());
    // SAFETY: ConvertSidToStringSidW returned a NUL-terminated string, alive until `_free`.
    Ok(unsafe { from_wide_nul(text) })
}

/// An open access token, closed when dropped.
struct Token(HANDLE);

impl Token {
    fn of_this_process() -> io::Result<Self> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: GetCurrentProcess is a pseudo handle; `token` receives a handle we close.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(token))
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// A security descriptor made from its text, freed when dropped.
struct Descriptor(PSECURITY_DESCRIPTOR);

impl Descriptor {
    fn from_sddl(sddl: &str) -> io::Result<Self> {
        let text = wide(OsStr::new(sddl));
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `text` is NUL-terminated; the descriptor is ours to LocalFree (Drop).
        let made = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if made == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(descriptor))
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        drop(Local(self.0));
    }
}

/// Memory the system allocated for us with LocalAlloc, freed when dropped.
struct Local(HLOCAL);

impl Drop for Local {
    fn drop(&mut self) {
        // SAFETY: the memory came from the system's LocalAlloc and is freed once.
        unsafe { LocalFree(self.0) };
    }
}

fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain(Some(0)).collect()
}

/// # Safety
/// `text` points to a NUL-terminated UTF-16 string.
unsafe fn from_wide_nul(text: *const u16) -> String {
    let mut len = 0;
    // SAFETY: the caller promises a NUL within the string.
    while unsafe { *text.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` units before the NUL are initialised (above).
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, len) })
}

#[cfg(test)]
mod tests {
    use windows_sys::Win32::Security::Authorization::ConvertSecurityDescriptorToStringSecurityDescriptorW;
    use windows_sys::Win32::Security::GetFileSecurityW;

    use super::*;

    /// The DACL of `path`, as SDDL text.
    fn dacl_of(path: &Path) -> String {
        let path = wide(path.as_os_str());
        let mut needed = 0;
        // SAFETY: asking for the size only.
        unsafe {
            GetFileSecurityW(
                path.as_ptr(),
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                0,
                &mut needed,
            )
        };
        let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
        // SAFETY: `buffer` holds `needed` bytes.
        let got = unsafe {
            GetFileSecurityW(
                path.as_ptr(),
                DACL_SECURITY_INFORMATION,
                buffer.as_mut_ptr().cast(),
                needed,
                &mut needed,
            )
        };
        assert_ne!(got, 0, "{}", io::Error::last_os_error());
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a descriptor GetFileSecurityW filled; the string is LocalFree'd below.
        let made = unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                buffer.as_mut_ptr().cast(),
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(made, 0, "{}", io::Error::last_os_error());
        let _local = Local(text.cast());
        // SAFETY: a NUL-terminated string from the conversion above.
        unsafe { from_wide_nul(text) }
    }

    #[test]
    fn a_private_dir_is_the_users_and_systems_alone_and_its_files_inherit_that() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        make_private(&dir).unwrap();
        let user = current_user_sid().unwrap();
        assert!(user.starts_with("S-1-"), "{user}");
        let dacl = dacl_of(&dir);
        // Windows keeps the descriptor's protected flag; Wine 8 keeps its ACEs only.
        let protected = if under_wine() { "D:" } else { "D:P" };
        assert!(dacl.starts_with(protected), "{dacl}");
        assert!(dacl.contains(&user) && dacl.contains(";SY)"), "{dacl}");
        assert_eq!(dacl.matches("(A;").count(), 2, "no one else: {dacl}");
        // Wine gives a new file a DACL of its Unix mode, inheriting nothing: Windows only.
        if !under_wine() {
            std::fs::write(dir.join("jobs.sqlite3"), b"x").unwrap();
            let file = dacl_of(&dir.join("jobs.sqlite3"));
            assert!(file.contains(&user), "{file}");
            assert_eq!(file.matches("(A;").count(), 2, "no one else: {file}");
        }
    }

    /// Whether this runs under Wine, whose ntdll says so.
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
        let ntdll = wide(OsStr::new("ntdll.dll"));
        // SAFETY: ntdll is loaded in every process; both strings are NUL-terminated.
        unsafe {
            let module = GetModuleHandleW(ntdll.as_ptr());
            !module.is_null()
                && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
        }
    }

    #[test]
    fn the_descriptor_text_names_the_user_and_system_only() {
        assert_eq!(
            private_sddl("S-1-5-21-1-2-3-1001"),
            "D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1001)(A;OICI;FA;;;SY)"
        );
    }
}
