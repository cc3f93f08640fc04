//! Blocks a background application promotes to foreground requests are served when the
//! freeblock scheduler runs on the host (paper 001) as they are in the firmware: the host
//! schedules them with the foreground and their completions deliver them.

use std::sync::{Arc, Mutex};

use freeblock::external::{BlackBox, Effects, ExternalConfig, ExternalHost, HostModel};
use freeblock::freeblock::{BackgroundApp, Delivery, Freeblock, FreeblockConfig, Route, TaskControl, TaskReport};
use freeblock::sched::SchedulerSpec;
use freeblock::sim::{SimConfig, Simulation};
use freeblock_disk::Op;

use super::{atlas, random};

/// Registers `blocks` 4 KB blocks from `lbn` and promotes them all at once when it starts.
struct Promoter {
    lbn: u64,
    blocks: u64,
    got: Arc<Mutex<Vec<Delivery>>>,
}

impl BackgroundApp for Promoter {
    fn name(&self) -> String {
        "promoter".into()
    }
    fn block_bytes(&self) -> u64 {
        4096
    }
    fn start(&mut self, ctl: &mut TaskControl<'_>) -> freeblock::freeblock::error::Result<()> {
        ctl.register(self.lbn, self.blocks)?;
        ctl.promote(self.lbn..self.lbn + self.blocks * 8, Op::Read)?;
        Ok(())
    }
    fn on_blocks(&mut self, _ctl: &mut TaskControl<'_>, blocks: &[Delivery]) -> freeblock::freeblock::error::Result<()> {
        self.got.lock().unwrap().extend_from_slice(blocks);
        Ok(())
    }
    fn is_done(&self) -> bool {
        false
    }
    fn report(&self) -> TaskReport {
        TaskReport { name: self.name(), blocks_delivered: 0, block_bytes: 4096, passes: vec![], progress: vec![] }
    }
}

/// Runs 400 random 4 KB reads (SPTF, MPL 4) with a promoter of `blocks` blocks, in the
/// firmware or from the host; returns the deliveries and the requests completed.
fn run(external: bool, blocks: u64) -> (Vec<Delivery>, u64) {
    let disk = atlas();
    let got = Arc::new(Mutex::new(Vec::new()));
    let config = FreeblockConfig { max_promoted_sectors: Some(64), ..FreeblockConfig::default() };
    let mut fb = Freeblock::new(Arc::clone(&disk), config).unwrap();
    fb.add_app(Box::new(Promoter { lbn: 2_000_000, blocks, got: Arc::clone(&got) })).unwrap();
    let workload = random(400, 8, 1.0).build(disk.capacity(), 5).unwrap();
    let sim = SimConfig { scheduler: SchedulerSpec::Sptf, mpl: 4, ..SimConfig::default() };
    let mut simulation = Simulation::new(Arc::clone(&disk), workload, sim).with_freeblock(fb);
    if external {
        let host = ExternalConfig { model: HostModel::Truth, effects: Effects::default(), ..ExternalConfig::default() };
        let drive = BlackBox::new(Arc::clone(&disk), host.effects.clone(), 5);
        simulation = simulation.with_external(ExternalHost::new(drive, Arc::clone(&disk), host).unwrap());
    }
    let report = simulation.run(None).unwrap();
    let got = got.lock().unwrap().clone();
    (got, report.requests)
}

#[test]
fn promoted_blocks_are_served_from_the_host_as_in_the_firmware() {
    let blocks = 40;
    for external in [false, true] {
        let (got, requests) = run(external, blocks);
        let mut lbns: Vec<u64> = got.iter().map(|d| d.lbn).collect();
        lbns.sort_unstable();
        let want: Vec<u64> = (0..blocks).map(|b| 2_000_000 + 8 * b).collect();
        assert_eq!(lbns, want, "external = {external}: every promoted block delivered once");
        assert!(got.iter().all(|d| d.route == Route::Promoted), "external = {external}: {got:?}");
        // 320 sectors in requests of at most 64: five promoted requests beside the workload's.
        assert_eq!(requests, 400 + 5, "external = {external}");
    }
}
