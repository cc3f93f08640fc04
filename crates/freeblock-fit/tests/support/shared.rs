//! Where the workplace's shared reference data lives (`disksim-models`, `disksim-validation`,
//! `disksim-differential`): `$FREEBLOCK_SHARED` when set, else a `shared` folder beside the
//! repository or any folder above it, else `/work/shared` (where this project's machines keep it,
//! so that a clone made anywhere on them — CI's included — still finds it).

use std::path::{Path, PathBuf};

/// The shared folder holding `needed` (a sub-folder name), or `None` when there is none.
pub fn shared_dir(needed: &str) -> Option<PathBuf> {
    let from_env = std::env::var_os("FREEBLOCK_SHARED").map(PathBuf::from);
    let beside_repo = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().map(|a| a.join("shared")).collect::<Vec<_>>();
    from_env.into_iter().chain(beside_repo).chain([PathBuf::from("/work/shared")]).find(|d| d.join(needed).is_dir())
}
