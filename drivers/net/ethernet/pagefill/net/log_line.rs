// SPDX-License-Identifier: GPL-2.0

//! Log lines formatted without allocating, for the device's log messages.

use kernel::ffi::c_char;

/// A log message formatted on the stack (logging may happen in any context,
/// where nothing may be allocated), cut at [`LogLine::CAPACITY`] bytes and
/// NUL-terminated.
pub(super) struct LogLine {
    buf: [u8; LogLine::CAPACITY + 1],
    len: usize,
}

impl LogLine {
    const CAPACITY: usize = 159;

    pub(super) fn new() -> Self {
        Self {
            buf: [0; Self::CAPACITY + 1],
            len: 0,
        }
    }

    /// The message as a C string (the buffer's last byte is never written).
    pub(super) fn as_ptr(&self) -> *const c_char {
        self.buf.as_ptr().cast()
    }
}

impl core::fmt::Write for LogLine {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = Self::CAPACITY - self.len;
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        if n < s.len() {
            return Err(core::fmt::Error);
        }
        Ok(())
    }
}
