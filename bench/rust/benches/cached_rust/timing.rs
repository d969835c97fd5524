//! Figure and anchor timed alternately in one process. Each repetition runs
//! a batch of each (which goes first alternates) for about the minimum time.
//! In-process cases count the thread's CPU time (time spent descheduled on a
//! busy machine is not counted); cases that talk to a server count the whole
//! process's CPU time (their I/O may run on other threads; the wait for the
//! server, and the server's own work, are not the client's cost), or wall time. Results: the medians of the
//! repetitions, in ns per call, and the median of the per-repetition ratios.
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
pub enum Clock {
    ThreadCpu,
    ProcessCpu,
    #[allow(dead_code)] // for a look at latency on an idle machine
    Wall,
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn cpu_ns(clock: libc::clockid_t) -> u128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; both CPU-time clocks are always there on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn time_per_op(clock: Clock, run: &mut dyn FnMut(u64), n: u64) -> f64 {
    let ns = match clock {
        Clock::ThreadCpu | Clock::ProcessCpu => {
            let id = if let Clock::ThreadCpu = clock {
                libc::CLOCK_THREAD_CPUTIME_ID
            } else {
                libc::CLOCK_PROCESS_CPUTIME_ID
            };
            let start = cpu_ns(id);
            run(n);
            cpu_ns(id) - start
        }
        Clock::Wall => {
            let start = Instant::now();
            run(n);
            start.elapsed().as_nanos()
        }
    };
    ns as f64 / n as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

pub struct Comparison {
    pub figure: f64,
    pub anchor: f64,
    pub ratio: f64,
}

/// `run(n)` makes n calls.
pub fn compare(clock: Clock, figure: &mut dyn FnMut(u64), anchor: &mut dyn FnMut(u64)) -> Comparison {
    let repetitions: usize = env_or("CACHEKIT_BENCH_REPETITIONS", 21);
    let min_time = Duration::from_secs_f64(env_or("CACHEKIT_BENCH_MIN_TIME", 0.05));
    let n_figure = calibrate(clock, figure, min_time);
    let n_anchor = calibrate(clock, anchor, min_time);
    let (mut figures, mut anchors, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..repetitions {
        let (f, a) = if rep % 2 == 0 {
            let f = time_per_op(clock, figure, n_figure);
            (f, time_per_op(clock, anchor, n_anchor))
        } else {
            let a = time_per_op(clock, anchor, n_anchor);
            (time_per_op(clock, figure, n_figure), a)
        };
        figures.push(f);
        anchors.push(a);
        ratios.push(f / a);
    }
    Comparison {
        figure: median(figures),
        anchor: median(anchors),
        ratio: median(ratios),
    }
}

/// The number of calls that takes about `min_time`.
fn calibrate(clock: Clock, run: &mut dyn FnMut(u64), min_time: Duration) -> u64 {
    let mut n = 16u64;
    loop {
        let per_op = time_per_op(clock, run, n);
        if per_op * n as f64 >= min_time.as_nanos() as f64 / 4.0 {
            return (min_time.as_nanos() as f64 / per_op).ceil().max(1.0) as u64;
        }
        n *= 4;
    }
}
