//! Paper 000 §3 (head usage) and §6 (free mining).

pub fn head_usage(_: &crate::Options) -> crate::Result<crate::Outcome> {
    Err("not moved yet (issue 36 in progress)".into())
}

pub fn free_mining(_: &crate::Options) -> crate::Result<crate::Outcome> {
    Err("not moved yet (issue 36 in progress)".into())
}
