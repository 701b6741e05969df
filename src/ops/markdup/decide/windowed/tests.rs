use super::*;
use crate::ops::markdup::decide::tests::{input_spaced, outcome_text, run};
use crate::record::view::RecordRef;

/// Decides `recs` in windows of at least `min` records with warm-ups of `reach` bases, the
/// infos handed in blocks of 100: the outcomes as text, the stats, and how many windows began
/// at a forced cut and were replayed. Fails if the decider fell back to the single pass.
fn split(
    recs: &[Vec<u8>],
    opts: &MarkdupOptions,
    min: usize,
    reach: Option<i64>,
) -> (String, Vec<Stats>, usize, usize) {
    let infos: Vec<ReadInfo> =
        recs.iter().map(|b| ReadInfo::compute(&RecordRef::new(b), opts, 0)).collect();
    let name = |i: usize| RecordRef::new(&recs[i]).read_name();
    let pass2 = |i: usize, _| RecordRef::new(&recs[i]).read_name().to_vec();
    let flag = |i: usize| infos[i].flag;
    let mut d = Decider::new(opts, 0, min);
    if let Some(r) = reach {
        d.reach = r;
    }
    for chunk in infos.chunks(100) {
        d.push(&mut chunk.to_vec(), &name);
    }
    assert!(!d.single_pass, "fell back to the single pass");
    let (forced, replayed) = (d.forced, d.replayed);
    let got = d.finish(&name, &pass2, &flag, &|| panic!("single pass"), &mut |_| {});
    let got = got.ok().unwrap();
    let text: Vec<String> = got.outcomes.iter().map(outcome_text).collect();
    (text.join("\n"), got.stats, forced, replayed)
}

fn variants() -> [MarkdupOptions; 3] {
    [
        MarkdupOptions::default(),
        MarkdupOptions { tag: true, dup_count: true, supp: true, ..Default::default() },
        MarkdupOptions { opt_dist: 100, tag: true, remove: true, ..Default::default() },
    ]
}

/// Clusters every 20 bases on average: no stretch of `max_length` without a read start, so
/// no clean cut. Forced cuts replay the single pass, and the warm-up almost always rebuilds
/// the state by itself.
#[test]
fn forced_cuts_on_dense_data_replay_the_single_pass() {
    let recs = input_spaced(40, 400);
    for opts in &variants() {
        let whole = run(&recs, opts, usize::MAX);
        assert!(whole.1[0].duplicate > 0);
        assert!(opts.opt_dist == 0 || whole.1[0].optical > 0, "no optical duplicates");
        for min in [16, 64, 200] {
            let (text, stats, forced, replayed) = split(&recs, opts, min, None);
            assert!(text == whole.0, "outcomes differ with windows of {min}");
            assert_eq!(stats, whole.1, "stats differ with windows of {min}");
            assert!(forced >= 4, "only {forced} forced cuts with windows of {min}");
            assert!(replayed * 10 <= forced, "{replayed} of {forced} replayed ({min})");
        }
    }
}

/// With no warm-up at all, the state after a forced cut is never rebuilt: every such window
/// is decided again from the previous window's state, with the same result.
#[test]
fn windows_without_warm_up_continue_from_the_exact_state() {
    let recs = input_spaced(40, 400);
    for opts in &variants() {
        let whole = run(&recs, opts, usize::MAX);
        let (text, stats, forced, replayed) = split(&recs, opts, 32, Some(0));
        assert!(text == whole.0, "outcomes differ");
        assert_eq!(stats, whole.1, "stats differ");
        assert!(forced >= 4 && replayed * 10 >= forced * 9, "{replayed} of {forced} replayed");
    }
}
