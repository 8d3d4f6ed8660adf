//! A page's inline scripts run in a sandbox, for the text they build at load time: base64
//! through `atob`, arrays of char codes through `String.fromCharCode`, reversed strings, and
//! whatever else a script computes before it writes into the page. The literal scanner
//! ([`crate::script`]) reads what a script *says*; this reads what it *does*.
//!
//! The engine is QuickJS (`rquickjs`), chosen over `boa_engine` for its build time on small
//! machines and for the two limits it enforces itself: a memory cap on the runtime's allocator
//! and an interrupt handler that ends a run past its deadline. It gets no capability: no
//! network, no file, no timers beyond one bounded pass, no module loader. The page sees a
//! minimal `document` written in JavaScript (the [`PRELUDE`]): `getElementById`,
//! `querySelector`/`querySelectorAll` (`#id`, `.class`, a tag name) over the elements of the
//! parsed page, `innerHTML`/`innerText`/`textContent` setters and `document.write`, plus `atob`,
//! `btoa`, `decodeURIComponent` and `escape` (the last two are the engine's own). Whatever the
//! scripts write is collected as HTML, in order, into an array that the page's scripts cannot
//! replace; Rust reads it element by element, running no script of the page's to do so.
//!
//! Each script runs on its own (an error in one does not stop the next), then the callbacks
//! given to `setTimeout`, `setInterval`, `addEventListener("DOMContentLoaded"|"load")` and
//! `$(fn)` once each, in order, all within one page budget ([`ScriptSettings`]): wall time
//! (checked by the interrupt handler, so an endless loop ends there), memory (a huge string
//! fails to allocate), native stack (unbounded recursion is a `RangeError`), and the bytes of
//! script and of output read. CPU-heavy: call it on a blocking thread, as [`crate::read_page`]
//! is.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::module::WriteOptions;
use rquickjs::{Array, Context, Ctx, Function, Module, Runtime, Value};
use serde::{Deserialize, Serialize};

thread_local! {
    /// The engine of this thread (see [`evaluate`]).
    static RUNTIME: RefCell<Option<Runtime>> = const { RefCell::new(None) };
    /// The [`PRELUDE`] compiled by this thread's engine.
    static PRELUDE_BYTECODE: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// The limits of one page's evaluation.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default)]
pub struct ScriptSettings {
    /// Wall time all of a page's scripts may take together.
    #[serde(with = "crate::duration_serde")]
    pub time_budget: Duration,
    /// Work all of a page's scripts may do together, in the engine's interrupt checks (QuickJS
    /// asks the interrupt handler about every 10,000 operations): the budget that ends an
    /// endless loop the same way on a busy machine as on an idle one.
    pub max_interrupt_checks: u64,
    /// Memory the engine may allocate for the page, in bytes.
    pub memory_bytes: usize,
    /// Native stack the engine may use, in bytes (deep recursion stops there).
    pub stack_bytes: usize,
    /// Script source evaluated per page, in bytes.
    pub max_source_bytes: usize,
    /// Output (HTML written into the page) kept per page, in bytes.
    pub max_output_bytes: usize,
}

impl Default for ScriptSettings {
    fn default() -> Self {
        ScriptSettings {
            // A script that builds a chapter takes well under a millisecond; a hostile one is
            // cut here.
            time_budget: Duration::from_millis(50),
            // A few million operations: a chapter's decoding takes a small fraction of it.
            max_interrupt_checks: 500,
            memory_bytes: 32 << 20,
            stack_bytes: 256 << 10,
            max_source_bytes: 2 << 20,
            max_output_bytes: 4 << 20,
        }
    }
}

impl ScriptSettings {
    /// Checks that every limit is usable.
    ///
    /// # Errors
    /// The first setting out of range, keyed relative to this section.
    pub fn validate(&self) -> bounds::Check {
        bounds::at_least("time_budget", self.time_budget, Duration::from_millis(1))?;
        bounds::at_least("max_interrupt_checks", self.max_interrupt_checks, 1)?;
        bounds::at_least("memory_bytes", self.memory_bytes, 1 << 20)?;
        bounds::at_least("stack_bytes", self.stack_bytes, 64 << 10)?;
        bounds::at_least("max_source_bytes", self.max_source_bytes, 1)?;
        bounds::at_least("max_output_bytes", self.max_output_bytes, 1)
    }
}

/// What a page's scripts wrote.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluated {
    /// The HTML written into the page (element contents and `document.write`), in order.
    pub html: String,
    /// The text drawn on the page's canvases (and on canvases the scripts made and attached),
    /// in call order, at most [`crate::canvas::MAX_CALLS`] calls.
    pub drawn: Vec<crate::canvas::DrawCall>,
    /// Scripts (and callbacks) that ended in an error, the budget's included.
    pub failed: usize,
    /// Whether the page's budget ran out (time or output).
    pub out_of_budget: bool,
}

/// An element of the parsed page, as the minimal `document` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PageElement {
    /// Its tag name, lower case.
    pub tag: String,
    /// Its `id`, if any.
    pub id: Option<String>,
    /// Its classes.
    pub classes: Vec<String>,
    /// For a `<canvas>`, its place among the page's canvases in document order.
    pub canvas: Option<usize>,
}

/// The minimal `document` and the helpers pages use, defined (as a module, so in strict mode)
/// before the page's scripts run; see `js_prelude.js`.
pub const PRELUDE: &str = include_str!("js_prelude.js");

/// Runs `scripts` (a page's inline scripts, in document order) over a page of `elements` and
/// returns what they wrote; see the [module docs](self).
pub fn evaluate(
    scripts: &[String],
    elements: &[PageElement],
    settings: &ScriptSettings,
    deadline: Option<Instant>,
) -> Evaluated {
    let mut out = Evaluated::default();
    let started = Instant::now();
    let end = started + settings.time_budget;
    let end = deadline.map_or(end, |d| d.min(end));
    // One engine per thread, a fresh context per page: a context shares no object with the
    // last page's, and an engine costs more to make than the scripts of most pages to run.
    let Some(runtime) = RUNTIME.with(|r| {
        if r.borrow().is_none() {
            *r.borrow_mut() = Runtime::new().ok();
        }
        r.borrow().clone()
    }) else {
        out.failed = scripts.len();
        return out;
    };
    runtime.set_memory_limit(settings.memory_bytes);
    runtime.set_max_stack_size(settings.stack_bytes);
    let exhausted = Rc::new(Cell::new(false));
    let flag = Rc::clone(&exhausted);
    let max_checks = settings.max_interrupt_checks;
    let mut checks = 0u64;
    // Checks allowed past the budget: reading the drawing back after a page used it all up.
    let grace = Rc::new(Cell::new(0u64));
    let grace_left = Rc::clone(&grace);
    runtime.set_interrupt_handler(Some(Box::new(move || {
        checks += 1;
        let mut stop = checks > max_checks || Instant::now() >= end;
        if stop && grace_left.get() > 0 {
            grace_left.set(grace_left.get() - 1);
            stop = false;
        }
        if stop {
            flag.set(true);
        }
        stop
    })));
    let Ok(context) = Context::full(&runtime) else {
        out.failed = scripts.len();
        return out;
    };
    let elements_json = serde_json::to_string(elements).unwrap_or_else(|_| "[]".to_owned());
    context.with(|ctx| {
        let globals = ctx.globals();
        // The prelude's three handles, taken before the page's scripts run and removed from
        // their reach.
        let handles = run_prelude(&ctx).and_then(|()| {
            let written: Array<'_> = globals.get("__copyhound_out")?;
            let setup: Function<'_> = globals.get("__copyhound_setup")?;
            let deferred: Function<'_> = globals.get("__copyhound_run_deferred")?;
            let drawing: Function<'_> = globals.get("__copyhound_drawing")?;
            setup.call::<_, ()>((elements_json.as_str(),))?;
            for name in [
                "__copyhound_out",
                "__copyhound_setup",
                "__copyhound_run_deferred",
                "__copyhound_drawing",
            ] {
                globals.remove(name)?;
            }
            Ok((written, deferred, drawing))
        });
        let Ok((written, deferred, drawing)) = handles else {
            out.failed = scripts.len();
            return;
        };
        let mut source_left = settings.max_source_bytes;
        for script in scripts {
            if exhausted.get() || Instant::now() >= end {
                out.out_of_budget = true;
                break;
            }
            if script.len() > source_left {
                out.out_of_budget = true;
                break;
            }
            source_left -= script.len();
            let mut options = EvalOptions::default();
            // Pages' scripts are sloppy-mode scripts: they assign undeclared globals.
            options.strict = false;
            if ctx
                .eval_with_options::<(), _>(script.as_str(), options)
                .is_err()
            {
                let _ = ctx.catch();
                out.failed += 1;
            }
        }
        // The deferred callbacks, once each, through the prelude's own function.
        if !exhausted.get() && Instant::now() < end {
            match deferred.call::<_, i32>(()) {
                Ok(failed) => out.failed += failed.max(0) as usize,
                Err(_) => {
                    let _ = ctx.catch();
                    out.failed += 1;
                }
            }
        }
        collect(&written, settings.max_output_bytes, &mut out);
        // The drawing is read even when the budget ran out: what was drawn by then counts,
        // as the HTML written by then does. Its list is built by the prelude's function over
        // values the page never held.
        // A bounded pass over at most MAX_CALLS entries (a few hundred checks).
        grace.set(400);
        let listed = drawing.call::<_, Array<'_>>(());
        grace.set(0);
        match listed {
            Ok(list) => out.drawn = collect_drawn(&list),
            Err(_) => {
                let _ = ctx.catch();
            }
        }
    });
    drop(context);
    runtime.set_interrupt_handler(None);
    // What the page left is freed before the next page counts against the memory limit.
    runtime.run_gc();
    if exhausted.get() || Instant::now() >= end {
        out.out_of_budget = true;
    }
    out
}

/// Defines the [`PRELUDE`] in `ctx`: from the bytecode this thread compiled it to (compiling
/// its source takes four times as long as loading it, a few hundred microseconds a page).
fn run_prelude(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let bytecode = PRELUDE_BYTECODE.with(|b| b.borrow().clone());
    let module = match bytecode {
        // SAFETY: these bytes are what `Module::write` of this same engine made of PRELUDE on
        // this thread (below); nothing from a page or from outside the process is ever read
        // as bytecode.
        #[allow(unsafe_code)]
        Some(bytes) => unsafe { Module::load(ctx.clone(), &bytes)? },
        None => {
            let module = Module::declare(ctx.clone(), "prelude", PRELUDE)?;
            let bytes = module.write(WriteOptions::default())?;
            PRELUDE_BYTECODE.with(|b| *b.borrow_mut() = Some(bytes));
            module
        }
    };
    let (_, done) = module.eval()?;
    done.finish::<()>()
}

/// The draw calls of the prelude's list: `[canvas index or null, text, x, y, font px]` each;
/// malformed entries are skipped.
fn collect_drawn(list: &Array<'_>) -> Vec<crate::canvas::DrawCall> {
    let mut out = Vec::new();
    for i in 0..list.len().min(crate::canvas::MAX_CALLS) {
        let Ok(entry) = list.get::<Array<'_>>(i) else {
            continue;
        };
        let canvas = match entry.get::<Value<'_>>(0) {
            Ok(v) if v.is_null() || v.is_undefined() => None,
            Ok(v) => match v.as_number() {
                Some(n) if (0.0..1e9).contains(&n) => Some(n as usize),
                _ => continue,
            },
            Err(_) => continue,
        };
        let (Ok(text), Ok(x), Ok(y), Ok(size)) = (
            entry.get::<String>(1),
            entry.get::<f64>(2),
            entry.get::<f64>(3),
            entry.get::<f64>(4),
        ) else {
            continue;
        };
        out.push(crate::canvas::DrawCall {
            canvas,
            text,
            x,
            y,
            size,
        });
    }
    out
}

/// Reads what the page wrote without running any of its code: the items are strings the
/// prelude stored as own properties of an array the page never saw.
fn collect(written: &Array<'_>, max_bytes: usize, out: &mut Evaluated) {
    for i in 0..written.len() {
        let Ok(value) = written.get::<Value<'_>>(i) else {
            continue;
        };
        let Some(s) = value.as_string().and_then(|s| s.to_string().ok()) else {
            continue;
        };
        if out.html.len() + s.len() > max_bytes {
            out.out_of_budget = true;
            break;
        }
        out.html.push_str(&s);
        out.html.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(scripts: &[&str]) -> Evaluated {
        let elements = vec![
            PageElement {
                tag: "div".into(),
                id: Some("content".into()),
                classes: vec!["read".into()],
                canvas: None,
            },
            PageElement {
                tag: "body".into(),
                id: None,
                classes: vec![],
                canvas: None,
            },
            PageElement {
                tag: "canvas".into(),
                id: Some("c".into()),
                classes: vec![],
                canvas: Some(0),
            },
        ];
        let scripts: Vec<String> = scripts.iter().map(|s| (*s).to_owned()).collect();
        // The work budget ends runaway scripts; the wall-time one is a backstop that a busy
        // test machine must not reach.
        let settings = ScriptSettings {
            time_budget: Duration::from_secs(30),
            ..ScriptSettings::default()
        };
        evaluate(&scripts, &elements, &settings, None)
    }

    #[test]
    fn text_built_at_load_time_is_read() {
        let e = run(&[
            r#"document.getElementById("content").innerHTML = decodeURIComponent(escape(atob("5aSp5LiL5aSn5Yq/")));"#,
        ]);
        assert_eq!(e.html.trim(), "天下大势");
        let e = run(&[
            "var a = [22825, 19979]; document.querySelector('#content').textContent = String.fromCharCode.apply(null, a);",
        ]);
        assert_eq!(e.html.trim(), "天下");
        let e = run(&["var s = 'olleh'; $('.read').html(s.split('').reverse().join(''));"]);
        assert_eq!(e.html.trim(), "hello");
        let e = run(&["document.write('<p>a &amp; b</p>'); document.writeln('<p>c</p>');"]);
        assert!(e.html.contains("<p>a &amp; b</p>") && e.html.contains("<p>c</p>"));
        // Text set as text is escaped before it becomes HTML.
        let e = run(&["document.getElementById('content').innerText = '<b>x</b>';"]);
        assert_eq!(e.html.trim(), "&lt;b&gt;x&lt;/b&gt;");
    }

    #[test]
    fn deferred_callbacks_run_once_and_errors_do_not_stop_the_next_script() {
        let e = run(&[
            "undefinedFunction();",
            "setTimeout(function () { document.getElementById('content').innerHTML = 'later'; }, 5000);",
            "window.addEventListener('load', function () { document.write('loaded'); });",
            "setInterval(function () { document.write('tick'); }, 1);",
        ]);
        assert_eq!(e.failed, 1);
        assert_eq!(e.html.matches("tick").count(), 1);
        assert!(e.html.contains("later") && e.html.contains("loaded"));
    }

    #[test]
    fn hostile_scripts_end_within_their_budget() {
        for hostile in [
            "while (true) {}",
            "for (;;) { try { while (true) {} } catch (e) {} }",
            "(function f() { return f() + 1; })();",
            "var s = 'x'; while (true) { s += s; }",
            "var a = []; for (;;) { a.push(new Array(1e6).join('z')); }",
            "'x'.repeat(1 << 30);",
            "Object.defineProperty(Object.prototype, 'innerHTML', { set: function () { throw 1; } }); String.prototype.split = function () { return []; }; Array.prototype.join = null; Array.prototype.push = null; document.getElementById = null;",
            "Object.defineProperty(globalThis, '__copyhound_out', { value: ['<p>forged</p>'] });",
            "__copyhound_out.length = 0; __copyhound_out.push = null;",
            "JSON.parse('['.repeat(1e6));",
            "new Promise(function r() { Promise.resolve().then(r); });",
            "setTimeout(function f() { setTimeout(f); while (true) {} });",
        ] {
            let started = Instant::now();
            let e = run(&[
                "document.getElementById('content').innerHTML = 'before';",
                hostile,
                "document.write('after');",
            ]);
            // The work budget ended it, not the 30 s backstop.
            assert!(started.elapsed() < Duration::from_secs(20), "{hostile}");
            assert!(!e.html.contains("forged"), "{hostile}");
            assert!(e.html.len() <= ScriptSettings::default().max_output_bytes);
            assert!(
                e.html.contains("before") || e.failed > 0,
                "{hostile}: {e:?}"
            );
        }
    }

    #[test]
    fn the_work_budget_ends_a_loop_and_says_so() {
        let e = run(&[
            "document.write('a');",
            "for (;;) {}",
            "document.write('b');",
        ]);
        assert!(e.out_of_budget);
        assert_eq!(e.html.trim(), "a");
        let e = run(&["document.write('a');"]);
        assert!(!e.out_of_budget);
    }

    #[test]
    fn pages_scripts_run_in_sloppy_mode_and_each_page_starts_afresh() {
        // An undeclared global, as pirate pages assign them.
        let e = run(&["c = 'x'; document.write(c);"]);
        assert_eq!((e.html.trim(), e.failed), ("x", 0));
        // What one page left (a global, a changed prototype) is gone on the next: the same
        // thread's engine, a new context.
        run(&["leftover = 1; String.prototype.trim = null;"]);
        let e = run(&["document.write(typeof leftover + ' ' + typeof ''.trim);"]);
        assert_eq!(e.html.trim(), "undefined function");
    }

    #[test]
    fn no_capability_is_exposed() {
        let e = run(&[
            "document.write([typeof fetch, typeof XMLHttpRequest, typeof require, typeof std, typeof os, typeof process, typeof importScripts].join(','));",
        ]);
        assert_eq!(
            e.html.trim(),
            "undefined,undefined,undefined,undefined,undefined,undefined,undefined"
        );
    }

    #[test]
    fn text_drawn_on_a_canvas_is_recorded_where_it_lands() {
        let e = run(&[r#"
            var ctx = document.getElementById('c').getContext('2d');
            ctx.font = 'bold 20px serif';
            ctx.fillText(String.fromCharCode(22823, 21183), 40, 30);
            ctx.save(); ctx.translate(0, 30); ctx.strokeText(atob('') + String.fromCharCode(22825, 19979), 0, 0); ctx.restore();
            ctx.fillRect(0, 0, 10, 10); ctx.beginPath();
            ctx.fillText('w=' + ctx.measureText('天下').width, 0, 60);
            var hidden = document.createElement('canvas');
            hidden.getContext('2d').fillText('hidden', 0, 0);
            var shown = document.createElement('canvas');
            document.body.appendChild(shown);
            shown.getContext('2d').fillText('shown', 0, 0);
            document.querySelector('canvas').getContext('2d').fillText('!', 80, 31);
            if (document.createElement('div').getContext('2d') !== null) throw 1;
        "#]);
        assert_eq!(e.failed, 0, "{e:?}");
        let drawings = crate::canvas::order(&e.drawn);
        assert_eq!(drawings.len(), 2);
        assert_eq!(drawings[0].lines, ["天下大势!", "w=40"]);
        assert_eq!(drawings[1].canvas, None);
        assert_eq!(drawings[1].lines, ["shown"]);
        assert!(e.drawn.iter().all(|c| c.text != "hidden"));
        assert_eq!(e.drawn[0].size, 20.0);
    }

    #[test]
    fn a_million_draw_calls_stay_within_the_bounds() {
        let started = Instant::now();
        let e = run(&[
            "var ctx = document.getElementById('c').getContext('2d'); for (var i = 0; i < 1e6; i++) ctx.fillText('字', (i % 40) * 16, (i / 40 | 0) * 20);",
        ]);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(!e.drawn.is_empty() && e.drawn.len() <= crate::canvas::MAX_CALLS);
        // A page forging the drawing's list reaches nothing.
        let e = run(&["__copyhound_drawing = function () { return [[0, 'forged', 0, 0, 10]]; };"]);
        assert!(e.drawn.is_empty());
    }
}
