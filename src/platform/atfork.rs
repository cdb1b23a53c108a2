//! Installing `fork()` handlers once, so that no lock they guard is ever taken before they are
//! in place.
//!
//! A plain "first caller installs" flag is not enough: while the first thread is still inside
//! `pthread_atfork` (which waits while another thread forks), a second thread that sees the
//! flag set takes the guarded lock, a third forks, and the child inherits that lock held by a
//! thread it does not have. A `Once` is worse: a child forked while it runs waits for ever.
//! Here a caller returns only once the handlers are registered in this process; a thread that
//! finds another installing them waits (a fork in progress delays the installer by the length
//! of that fork, no more); and a child forked in the middle of an installation, where the
//! installing thread no longer exists, installs them itself.

use std::sync::atomic::{AtomicU64, Ordering};

/// What an [`AtFork`] records: [`NONE`], [`DONE`], or the pid of the process whose thread is
/// installing the handlers.
const NONE: u64 = 0;
const DONE: u64 = u64::MAX;

/// `static $handlers: AtFork` whose handlers hold the `Mutex<$t>` `$lock` across `fork()`: the
/// forking thread takes it in `prepare` and lets it go in the parent and the child, so the child
/// never inherits it held by a thread it does not have. Call `$handlers.ensure()` before every
/// use of the lock.
macro_rules! hold_across_fork {
    ($vis:vis static $handlers:ident = $lock:path, $t:ty) => {
        $vis static $handlers: $crate::platform::atfork::AtFork = {
            ::std::thread_local! {
                static HELD: ::std::cell::RefCell<Option<::std::sync::MutexGuard<'static, $t>>> =
                    const { ::std::cell::RefCell::new(None) };
            }
            extern "C" fn prepare() {
                let guard = $lock.lock().unwrap_or_else(::std::sync::PoisonError::into_inner);
                let _ = HELD.try_with(|h| *h.borrow_mut() = Some(guard));
            }
            extern "C" fn release() {
                let _ = HELD.try_with(|h| h.borrow_mut().take());
            }
            $crate::platform::atfork::AtFork::new(Some(prepare), Some(release), Some(release))
        };
    };
}
pub(crate) use hold_across_fork;

/// The handlers of one `pthread_atfork` call.
pub struct AtFork {
    flag: AtomicU64,
    prepare: Option<extern "C" fn()>,
    parent: Option<extern "C" fn()>,
    child: Option<extern "C" fn()>,
}

impl AtFork {
    pub const fn new(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> AtFork {
        AtFork { flag: AtomicU64::new(NONE), prepare, parent, child }
    }

    /// Returns once the handlers are registered in this process. One atomic load once they are.
    pub fn ensure(&self) {
        if self.flag.load(Ordering::Acquire) == DONE {
            return;
        }
        self.install_slow();
    }

    #[cold]
    fn install_slow(&self) {
        // SAFETY: getpid has no preconditions.
        let me = u64::from(unsafe { libc::getpid() }.unsigned_abs());
        loop {
            match self.flag.load(Ordering::Acquire) {
                DONE => return,
                // Not started, or started by a thread of the process this one was forked from
                // (that thread is not here): this thread installs them.
                current if current == NONE || current != me => {
                    if self.flag.compare_exchange(current, me, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        // SAFETY: the handlers are `extern "C"` functions that only take and
                        // release regcheck's own locks or close its own descriptors.
                        let c = |f: Option<extern "C" fn()>| f.map(|f| f as unsafe extern "C" fn());
                        unsafe { libc::pthread_atfork(c(self.prepare), c(self.parent), c(self.child)) };
                        self.flag.store(DONE, Ordering::Release);
                        return;
                    }
                }
                // Another thread of this process is installing them.
                _ => std::thread::yield_now(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static PREPARED: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn prepare() {
        PREPARED.fetch_add(1, Ordering::SeqCst);
    }
    static HANDLERS: AtFork = AtFork::new(Some(prepare), None, None);

    #[test]
    fn installs_once_and_a_child_of_an_interrupted_installation_installs_again() {
        HANDLERS.ensure();
        HANDLERS.ensure();
        assert_eq!(HANDLERS.flag.load(Ordering::SeqCst), DONE);
        // SAFETY: the child only calls async-signal-safe functions and _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        assert!(pid > 0);
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(PREPARED.load(Ordering::SeqCst), 1, "registered exactly once");

        // An installation another process's thread had started is taken over here.
        let other = AtFork::new(None, None, None);
        other.flag.store(u64::MAX - 1, Ordering::SeqCst);
        other.ensure();
        assert_eq!(other.flag.load(Ordering::SeqCst), DONE);
    }
}
