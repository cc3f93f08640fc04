//! p003_fs2

pub fn run(_: &crate::Options) -> crate::Result<crate::Outcome> {
    Err("not moved yet (issue 36 in progress)".into())
}
