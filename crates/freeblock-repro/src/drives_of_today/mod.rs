//! Drives of today (issue 34): the firmware command queue and the write cache.
