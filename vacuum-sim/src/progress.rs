//! Progress reporting on standard error: indicatif bars on a terminal,
//! plain periodic lines otherwise (logs, CI), or nothing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a plain-mode phase prints a line while it runs.
const PLAIN_INTERVAL: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Hidden,
    Bars,
    Plain,
}

/// Where progress goes. Cheap to pass by reference into the simulation.
#[derive(Clone, Debug)]
pub struct Progress {
    mode: Mode,
}

impl Progress {
    /// Bars when standard error is a terminal, plain lines otherwise.
    pub fn auto() -> Self {
        if std::io::stderr().is_terminal() {
            Self::bars()
        } else {
            Self::plain()
        }
    }

    /// No progress output (tests, `--quiet`).
    pub fn hidden() -> Self {
        Self { mode: Mode::Hidden }
    }

    /// Plain lines on standard error: a line when a phase ends, and one
    /// every 10 seconds while a long phase runs.
    pub fn plain() -> Self {
        Self { mode: Mode::Plain }
    }

    /// indicatif progress bars on standard error, and a line when a phase
    /// ends.
    pub fn bars() -> Self {
        Self { mode: Mode::Bars }
    }

    /// Prints a line (nothing when hidden).
    pub fn line(&self, text: &str) {
        if self.mode != Mode::Hidden {
            eprintln!("{text}");
        }
    }

    /// Starts a phase of `len` units (pages, index entries, blocks) labelled
    /// `label`, with `start` of them already done.
    pub fn phase(&self, label: String, unit: &'static str, len: u64, start: u64) -> Phase {
        let now = Instant::now();
        let display = match self.mode {
            Mode::Hidden => Display::Hidden,
            Mode::Plain => Display::Plain { last_line: now },
            Mode::Bars => {
                let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
                let template = format!(
                    "{{prefix}} [{{bar:30}}] {{percent:>3}}% {{human_pos}}/{{human_len}} {unit} \
                     {{elapsed_precise}} (eta {{eta}})"
                );
                bar.set_style(
                    ProgressStyle::with_template(&template)
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_prefix(label.clone());
                bar.set_position(start);
                bar.reset_eta();
                Display::Bar(bar)
            }
        };
        Phase {
            label,
            unit,
            len,
            started: now,
            display,
        }
    }
}

enum Display {
    Hidden,
    Bar(ProgressBar),
    Plain { last_line: Instant },
}

/// A running phase. Update it with [`set_position`](Self::set_position)
/// every few thousand units; end it with [`finish`](Self::finish).
pub struct Phase {
    label: String,
    unit: &'static str,
    len: u64,
    started: Instant,
    display: Display,
}

impl Phase {
    /// Records that `pos` of the phase's units are done.
    pub fn set_position(&mut self, pos: u64) {
        match &mut self.display {
            Display::Hidden => {}
            Display::Bar(bar) => bar.set_position(pos),
            Display::Plain { last_line } => {
                let now = Instant::now();
                if now.duration_since(*last_line) >= PLAIN_INTERVAL {
                    *last_line = now;
                    eprintln!(
                        "{}: {:.0}% ({}/{} {}), {:.1} s",
                        self.label,
                        100.0 * pos as f64 / self.len.max(1) as f64,
                        pos,
                        self.len,
                        self.unit,
                        now.duration_since(self.started).as_secs_f64()
                    );
                }
            }
        }
    }

    /// Ends the phase, printing `label: summary in N s` (nothing when
    /// hidden).
    pub fn finish(self, summary: &str) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let line = format!("{}: {summary} in {elapsed:.2} s", self.label);
        match self.display {
            Display::Hidden => {}
            Display::Bar(bar) => {
                bar.finish_and_clear();
                eprintln!("{line}");
            }
            Display::Plain { .. } => eprintln!("{line}"),
        }
    }
}
