use super::*;
use crate::record::build::RecordBuilder;
use crate::record::view::RecordRef;

/// A mapped, paired record with `MC` and `ms`: tid, pos, flag, soft clip, mate pos.
#[allow(clippy::too_many_arguments)]
fn rec(name: &[u8], tid: i32, pos: i32, flag: u16, clip: u32, mpos: i32, qual: u8) -> Vec<u8> {
    let cig: Vec<u32> = if clip > 0 { vec![clip << 4 | 4, 50 << 4] } else { vec![50 << 4] };
    let l = 50 + clip as usize;
    let mut aux = b"MCZ50M\0msi".to_vec();
    aux.extend_from_slice(&(qual as i32 * 50).to_le_bytes());
    RecordBuilder::new(name)
        .tid(tid)
        .pos(pos)
        .mapq(30)
        .flag(flag)
        .mate(tid, mpos)
        .cigar(&cig)
        .seq_fill(0x12, l)
        .qual(&vec![qual; l])
        .aux(&aux)
        .build()
}

/// Pairs on three references in clusters (duplicates, ties, soft clips), coordinate sorted.
pub(super) fn input() -> Vec<Vec<u8>> {
    input_spaced(1400, 150)
}

/// [`input`] with `clusters` clusters a reference, each up to `gap` bases after the last.
pub(super) fn input_spaced(gap: u64, clusters: usize) -> Vec<Vec<u8>> {
    let mut v: Vec<(i32, i32, Vec<u8>)> = Vec::new();
    let mut seed = 7u64;
    let mut rnd = |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    let mut id = 0;
    for tid in 0..3 {
        let mut pos = 100;
        for _ in 0..clusters {
            pos += rnd(gap) as i32;
            let copies = 1 + rnd(3) as usize;
            let insert = 200 + rnd(3) as i32 * 5;
            for _ in 0..copies {
                id += 1;
                let name = format!("L{}:{}:{:05}:{}", rnd(3), rnd(2), id, rnd(50));
                let q = 20 + rnd(3) as u8;
                let clip = if rnd(5) == 0 { 3 } else { 0 };
                let mp = pos + insert;
                v.push((tid, pos, rec(name.as_bytes(), tid, pos, 0x63, clip, mp, q)));
                v.push((tid, mp, rec(name.as_bytes(), tid, mp, 0x93, 0, pos, q)));
            }
        }
    }
    v.sort_by_key(|(t, p, _)| (*t, *p));
    v.into_iter().map(|x| x.2).collect()
}

pub(super) fn run(
    recs: &[Vec<u8>],
    opts: &MarkdupOptions,
    min_window: usize,
) -> (String, Vec<Stats>) {
    let infos: Vec<ReadInfo> =
        recs.iter().map(|b| ReadInfo::compute(&RecordRef::new(b), opts, 0)).collect();
    let name = |i: usize| RecordRef::new(&recs[i]).read_name();
    let pass2 = |i: usize, _| RecordRef::new(&recs[i]).read_name().to_vec();
    let mut log = |_: String| {};
    let d = decide_in(&infos, &name, &pass2, opts, 0, &mut log, min_window).ok().unwrap();
    let text: Vec<String> = d.outcomes.iter().map(outcome_text).collect();
    (text.join("\n"), d.stats)
}

pub(super) fn outcome_text(o: &Outcome) -> String {
    format!(
        "{} {} {} {} {:?} {} {} {} {}",
        o.written, o.dup, o.do_from, o.dt, o.dc, o.eof, o.np, o.np_do, o.np_dt
    )
}

#[test]
fn windows_never_change_the_decision() {
    let recs = input();
    let infos: Vec<ReadInfo> = recs
        .iter()
        .map(|b| ReadInfo::compute(&RecordRef::new(b), &MarkdupOptions::default(), 0))
        .collect();
    let many = windows(&infos, 300, 1);
    assert!(many.len() > 40, "only {} windows", many.len());
    let variants = [
        MarkdupOptions::default(),
        MarkdupOptions { tag: true, dup_count: true, ..Default::default() },
        MarkdupOptions {
            opt_dist: 100,
            tag: true,
            coords: None,
            remove: true,
            ..Default::default()
        },
    ];
    for opts in &variants {
        let one = run(&recs, opts, usize::MAX);
        assert!(one.1[0].duplicate > 0);
        for min in [1, 7, 64, 500] {
            let split = run(&recs, opts, min);
            assert_eq!(one.0, split.0, "outcomes differ with windows of {min}");
            assert_eq!(one.1, split.1, "stats differ with windows of {min}");
        }
    }
}

#[test]
fn blocks_of_infos_never_change_the_decision() {
    let recs = input();
    let opts = MarkdupOptions { tag: true, supp: true, dup_count: true, ..Default::default() };
    let whole = run(&recs, &opts, usize::MAX);
    let infos: Vec<ReadInfo> =
        recs.iter().map(|b| ReadInfo::compute(&RecordRef::new(b), &opts, 0)).collect();
    let name = |i: usize| RecordRef::new(&recs[i]).read_name();
    let pass2 = |i: usize, _| RecordRef::new(&recs[i]).read_name().to_vec();
    let flag = |i: usize| infos[i].flag;
    for block in [1, 37, 1000] {
        let mut d = Decider::new(&opts, 0, 64);
        for chunk in infos.chunks(block) {
            d.push(&mut chunk.to_vec(), &name);
        }
        let got = d.finish(&name, &pass2, &flag, &|| infos.clone(), &mut |_| {}).ok().unwrap();
        let text: Vec<String> = got.outcomes.iter().map(outcome_text).collect();
        assert_eq!(whole.0, text.join("\n"), "outcomes differ with blocks of {block}");
        assert_eq!(whole.1, got.stats, "stats differ with blocks of {block}");
    }
}
