//! `simulate`: SAM text from the generator, written as is or converted to BAM on the fly
//! (the generator writes into a pipe that the SAM reader parses in parallel).

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::input::Input;
use crate::io::open::PIECE_BYTES_PER_THREAD;
use crate::io::output::write_with;
use crate::io::output_spec::OutputSpec;
use crate::io::sam;
use crate::io::sink::{Encoded, RecordSink};
use crate::io::stream::ByteStream;
use crate::simulate::SimulateOptions;

/// `mdsam simulate`'s options: the generator's settings and where its output goes.
pub struct SimulateCommand {
    pub options: SimulateOptions,
    /// Written in the format its name implies (`.bam`, `.sam.gz`), else SAM; `-` is stdout.
    pub output: String,
    /// Where to write the reference sequences too (`--fasta`).
    pub fasta: Option<String>,
}

pub fn run(cmd: SimulateCommand) -> Result<(), Error> {
    let threads = cmd.options.threads.max(1);
    if let Some(path) = &cmd.fasta {
        write_with(path, |w| crate::simulate::write_fasta(&cmd.options, w))
            .map_err(|e| Error::io(path.as_str(), e))?;
    }
    let format = OutputFormat::from_path(&cmd.output).unwrap_or(OutputFormat::Sam);
    if format == OutputFormat::Sam {
        let out = cmd.output.as_str();
        return write_with(out, |w| crate::simulate::write_sam(&cmd.options, w))
            .map_err(|e| Error::io(out, e));
    }
    let (reader, mut writer) = std::io::pipe().map_err(|e| Error::Message(e.to_string()))?;
    let options = cmd.options.clone();
    let generator = std::thread::spawn(move || {
        let r = crate::simulate::write_sam(&options, &mut writer);
        drop(writer);
        r
    });
    let input = Input::from_reader("simulate", Box::new(reader));
    let stream = ByteStream::Plain(input, PIECE_BYTES_PER_THREAD * threads);
    let (mut sam_reader, header) =
        sam::Reader::new(stream, threads * 4).map_err(|e| Error::Message(e.to_string()))?;
    let mut sink =
        RecordSink::create(&cmd.output, &OutputSpec::new(format, -1), threads, &header, true)?;
    while let Some((batches, _)) =
        sam_reader.read_batches().map_err(|e| Error::Message(e.to_string()))?
    {
        for b in batches {
            let mut enc = Encoded::default();
            for i in 0..b.len() {
                enc.data.extend_from_slice(b.framed(i));
                enc.end_unit();
            }
            sink.write(&enc)?;
        }
    }
    generator
        .join()
        .map_err(|_| Error::Message("the generator thread failed".into()))?
        .map_err(|e| Error::Message(e.to_string()))?;
    sink.finish()
}
