//! `samtools tview`'s picture of a window of alignments (`bam_tview.c`, `bam_lpileup.c`,
//! `bam_tview_html.c`): rows for reads ([`levels`]), a consensus ([`consensus`] over
//! htslib's error model, [`crate::ops::errmod`]), drawn ([`draw`]) into a grid printed as text
//! or HTML ([`screen`]). No I/O: [`crate::pipeline::tview`] reads the window.

pub mod consensus;
pub mod draw;
pub mod levels;
pub mod screen;
