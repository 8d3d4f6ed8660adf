// The minimal browser a page's inline scripts see in crawler::js. No capability: nothing here
// reaches outside the engine. Rust takes `__copyhound_out`, `__copyhound_setup` and
// `__copyhound_run_deferred` and deletes them before the page's scripts run, so the page can
// neither read nor forge what it wrote. Writes go through Object.defineProperty, captured
// here, so that setters a page puts on Array.prototype do not intercept them.
(function () {
  "use strict";
  var g = globalThis;
  var defineProperty = Object.defineProperty;
  var apply = Reflect.apply;
  var out = [];
  var deferred = [];
  var cancelled = {};
  var byId = {};
  var all = [];
  // Text drawn on canvases: [canvas element, text, x, y, font px], bounded as the Rust side
  // reads it (extract::canvas::MAX_CALLS, MAX_CHARS).
  var drawn = [];
  var drawnChars = 0;
  var MAX_DRAWN = 50000;
  var MAX_DRAWN_CHARS = 200000;

  function put(slot, html) {
    defineProperty(out, slot, {
      value: html,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  function append(html) {
    var slot = out.length;
    put(slot, html);
    return slot;
  }
  function escapeHtml(s) {
    return ("" + s)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;");
  }

  function Element(tag, id, classes, attached) {
    this.tagName = ("" + tag).toUpperCase();
    // A canvas's place among the page's canvases; -1 for one a script made.
    this._canvas = this.tagName === "CANVAS" ? -1 : undefined;
    this._context = null;
    this.width = 300;
    this.height = 150;
    this.nodeName = this.tagName;
    this.nodeType = 1;
    this.id = id || "";
    this.className = classes || "";
    this.style = {};
    this.dataset = {};
    this.children = [];
    this.childNodes = [];
    this._html = "";
    this._slot = -1;
    this._attached = !!attached;
    this.classList = {
      add: function () {},
      remove: function () {},
      toggle: function () {},
      contains: function () {
        return false;
      },
    };
  }
  function write(el) {
    if (!el._attached) {
      return;
    }
    if (el._slot < 0) {
      el._slot = append(el._html);
    } else {
      put(el._slot, el._html);
    }
  }
  function attach(el) {
    if (el instanceof Element && !el._attached) {
      el._attached = true;
      write(el);
    }
    return el;
  }
  var proto = Element.prototype;
  // Each setter turns what it is given into HTML and writes it in the element's place.
  function property(name, toHtml) {
    defineProperty(proto, name, {
      get: function () {
        return this._html;
      },
      set: function (v) {
        this._html = toHtml(v);
        write(this);
      },
    });
  }
  function asHtml(v) {
    return "" + v;
  }
  property("innerHTML", asHtml);
  property("outerHTML", asHtml);
  property("innerText", function (v) {
    return escapeHtml(v).replace(/\n/g, "<br>");
  });
  property("textContent", escapeHtml);
  proto.appendChild = function (child) {
    return attach(child);
  };
  proto.append = function () {
    for (var i = 0; i < arguments.length; i++) {
      var a = arguments[i];
      if (a instanceof Element) {
        attach(a);
      } else {
        this._html += escapeHtml(a);
        write(this);
      }
    }
  };
  proto.prepend = proto.append;
  proto.insertBefore = function (child) {
    return attach(child);
  };
  proto.insertAdjacentHTML = function (_where, html) {
    this._html += "" + html;
    write(this);
  };
  proto.getContext = function (type) {
    if (this._canvas === undefined || ("" + type).toLowerCase() !== "2d") {
      return null;
    }
    if (!this._context) {
      this._context = new Context2d(this);
    }
    return this._context;
  };
  proto.toDataURL = function () {
    return "data:,";
  };
  proto.getBoundingClientRect = function () {
    return { top: 0, left: 0, right: this.width, bottom: this.height, width: this.width, height: this.height, x: 0, y: 0 };
  };
  proto.setAttribute = function () {};
  proto.getAttribute = function () {
    return null;
  };
  proto.removeAttribute = function () {};
  proto.addEventListener = function () {};
  proto.removeEventListener = function () {};
  proto.removeChild = function (c) {
    return c;
  };
  proto.remove = function () {};
  proto.cloneNode = function () {
    var c = new Element(this.tagName, "", this.className, false);
    c._html = this._html;
    return c;
  };
  proto.querySelector = function (sel) {
    return query(sel)[0] || null;
  };
  proto.querySelectorAll = function (sel) {
    return query(sel);
  };
  proto.getElementsByTagName = function (t) {
    return query(t);
  };
  proto.getElementsByClassName = function (c) {
    return query("." + c);
  };

  // `#id`, `.class`, `tag`, `tag#id`, `tag.class`; for a list or a compound selector, its
  // last simple part.
  function query(sel) {
    sel = ("" + sel).split(",")[0].trim().split(/\s+|>|\+|~/).pop() || "";
    var m = /^([a-zA-Z][a-zA-Z0-9-]*)?(?:#([^.#\[:]+))?(?:\.([^.#\[:]+))?/.exec(sel);
    if (!m) {
      return [];
    }
    var tag = m[1] ? m[1].toUpperCase() : null;
    var id = m[2];
    var cls = m[3];
    if (id && !tag && !cls) {
      return byId[id] ? [byId[id]] : [];
    }
    var found = [];
    for (var i = 0; i < all.length && found.length < 1000; i++) {
      var el = all[i];
      if (tag && el.tagName !== tag) continue;
      if (id && el.id !== id) continue;
      if (cls && (" " + el.className + " ").indexOf(" " + cls + " ") < 0) continue;
      found[found.length] = el;
    }
    return found;
  }

  function later(fn) {
    if (typeof fn === "function" && deferred.length < 200) {
      deferred[deferred.length] = fn;
      return deferred.length;
    }
    return 0;
  }

  // A 2D context that records the text drawn (where, after its transform) and does nothing
  // else.
  function fontPx(font) {
    var m = /(\d+(?:\.\d+)?)px/.exec("" + font);
    if (m) return +m[1];
    m = /(\d+(?:\.\d+)?)pt/.exec("" + font);
    return m ? (+m[1] * 4) / 3 : 10;
  }
  function Context2d(canvas) {
    this.canvas = canvas;
    this._m = [1, 0, 0, 1, 0, 0];
    this._saved = [];
    this._font = "10px sans-serif";
    this.fillStyle = "#000000";
    this.strokeStyle = "#000000";
    this.textAlign = "start";
    this.textBaseline = "alphabetic";
    this.lineWidth = 1;
    this.globalAlpha = 1;
  }
  var cproto = Context2d.prototype;
  defineProperty(cproto, "font", {
    get: function () {
      return this._font;
    },
    set: function (v) {
      this._font = "" + v;
    },
  });
  function record(ctx, text, x, y) {
    if (drawn.length >= MAX_DRAWN) return;
    var s = "" + text;
    if (drawnChars + s.length > MAX_DRAWN_CHARS) return;
    drawnChars += s.length;
    x = +x;
    y = +y;
    var m = ctx._m;
    var size = fontPx(ctx._font) * Math.sqrt(m[2] * m[2] + m[3] * m[3]);
    defineProperty(drawn, drawn.length, {
      value: [ctx.canvas, s, m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5], size],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  cproto.fillText = function (text, x, y) {
    record(this, text, x, y);
  };
  cproto.strokeText = cproto.fillText;
  cproto.measureText = function (text) {
    var s = fontPx(this._font);
    var t = "" + text;
    var w = 0;
    for (var i = 0; i < t.length; i++) w += t.charCodeAt(i) > 0x2e7f ? s : s * 0.55;
    return { width: w, actualBoundingBoxAscent: s * 0.8, actualBoundingBoxDescent: s * 0.2, actualBoundingBoxLeft: 0, actualBoundingBoxRight: w, fontBoundingBoxAscent: s * 0.8, fontBoundingBoxDescent: s * 0.2 };
  };
  function multiply(ctx, a, b, c, d, e, f) {
    var m = ctx._m;
    ctx._m = [m[0] * a + m[2] * b, m[1] * a + m[3] * b, m[0] * c + m[2] * d, m[1] * c + m[3] * d, m[0] * e + m[2] * f + m[4], m[1] * e + m[3] * f + m[5]];
  }
  cproto.transform = function (a, b, c, d, e, f) {
    multiply(this, +a, +b, +c, +d, +e, +f);
  };
  cproto.translate = function (x, y) {
    multiply(this, 1, 0, 0, 1, +x, +y);
  };
  cproto.scale = function (x, y) {
    multiply(this, +x, 0, 0, +y, 0, 0);
  };
  cproto.rotate = function (r) {
    multiply(this, Math.cos(r), Math.sin(r), -Math.sin(r), Math.cos(r), 0, 0);
  };
  cproto.setTransform = function (a, b, c, d, e, f) {
    if (a && typeof a === "object") {
      this._m = [+a.a, +a.b, +a.c, +a.d, +a.e, +a.f];
    } else {
      this._m = [+a, +b, +c, +d, +e, +f];
    }
  };
  cproto.resetTransform = function () {
    this._m = [1, 0, 0, 1, 0, 0];
  };
  cproto.getTransform = function () {
    var m = this._m;
    return { a: m[0], b: m[1], c: m[2], d: m[3], e: m[4], f: m[5] };
  };
  cproto.save = function () {
    if (this._saved.length < 1000) this._saved.push([this._m, this._font]);
  };
  cproto.restore = function () {
    var s = this._saved.pop();
    if (s) {
      this._m = s[0];
      this._font = s[1];
    }
  };
  var gradient = function () {
    return { addColorStop: function () {} };
  };
  cproto.createLinearGradient = gradient;
  cproto.createRadialGradient = gradient;
  cproto.createConicGradient = gradient;
  cproto.createPattern = gradient;
  cproto.getImageData = function () {
    return { data: [], width: 0, height: 0 };
  };
  cproto.createImageData = cproto.getImageData;
  cproto.isPointInPath = function () {
    return false;
  };
  cproto.getLineDash = function () {
    return [];
  };
  var drawing = ["clearRect", "fillRect", "strokeRect", "beginPath", "closePath", "moveTo", "lineTo", "arc", "arcTo", "ellipse", "bezierCurveTo", "quadraticCurveTo", "rect", "roundRect", "fill", "stroke", "clip", "drawImage", "putImageData", "setLineDash", "drawFocusIfNeeded"];
  for (var di = 0; di < drawing.length; di++) {
    cproto[drawing[di]] = function () {};
  }

  var body = new Element("body", "", "", true);
  var head = new Element("head", "", "", true);
  var documentElement = new Element("html", "", "", true);
  var document = {
    nodeType: 9,
    readyState: "loading",
    cookie: "",
    referrer: "",
    title: "",
    body: body,
    head: head,
    documentElement: documentElement,
    getElementById: function (id) {
      return byId["" + id] || null;
    },
    querySelector: function (sel) {
      return query(sel)[0] || null;
    },
    querySelectorAll: function (sel) {
      return query(sel);
    },
    getElementsByTagName: function (t) {
      return query(t);
    },
    getElementsByClassName: function (c) {
      return query("." + c);
    },
    getElementsByName: function () {
      return [];
    },
    createElement: function (tag) {
      return new Element(tag, "", "", false);
    },
    createTextNode: function (t) {
      var el = new Element("#text", "", "", false);
      el._html = escapeHtml(t);
      return el;
    },
    createDocumentFragment: function () {
      return new Element("#fragment", "", "", false);
    },
    write: function () {
      var s = "";
      for (var i = 0; i < arguments.length; i++) s += arguments[i];
      append(s);
    },
    writeln: function () {
      var s = "";
      for (var i = 0; i < arguments.length; i++) s += arguments[i];
      append(s + "\n");
    },
    addEventListener: function (type, fn) {
      if (type === "DOMContentLoaded" || type === "readystatechange") later(fn);
    },
    removeEventListener: function () {},
    open: function () {},
    close: function () {},
  };

  function wrap(els) {
    var w = {
      length: els.length,
      html: function (v) {
        if (arguments.length === 0) return els.length ? els[0]._html : undefined;
        for (var i = 0; i < els.length; i++) els[i].innerHTML = v;
        return w;
      },
      text: function (v) {
        if (arguments.length === 0) return els.length ? els[0]._html : "";
        for (var i = 0; i < els.length; i++) els[i].textContent = v;
        return w;
      },
      append: function (v) {
        for (var i = 0; i < els.length; i++) els[i].insertAdjacentHTML("beforeend", v);
        return w;
      },
      each: function (fn) {
        for (var i = 0; i < els.length; i++) fn.call(els[i], i, els[i]);
        return w;
      },
    };
    w.prepend = w.append;
    var chain = ["show", "hide", "css", "attr", "addClass", "removeClass", "on", "off", "click", "fadeIn", "fadeOut", "empty", "remove", "find", "eq", "first", "last", "parent", "children"];
    for (var i = 0; i < chain.length; i++) {
      w[chain[i]] = function () {
        return w;
      };
    }
    return w;
  }
  function $(arg) {
    if (typeof arg === "function") {
      later(arg);
      return wrap([]);
    }
    if (arg instanceof Element) return wrap([arg]);
    if (arg === document || arg === g) {
      return { ready: later, on: function (t, f) { if (t === "load" || t === "ready") later(f); } };
    }
    if (typeof arg === "string" && arg.charAt(0) !== "<") return wrap(query(arg));
    return wrap([]);
  }
  var noNetwork = function () {
    return { done: function () { return this; }, fail: function () { return this; }, always: function () { return this; }, then: function () { return this; } };
  };
  $.getJSON = noNetwork;
  $.get = noNetwork;
  $.post = noNetwork;
  $.ajax = noNetwork;
  $.each = function (o, fn) {
    for (var k in o) fn.call(o[k], k, o[k]);
  };
  $.fn = {};

  var b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function atob(s) {
    s = ("" + s).replace(/[\t\n\f\r ]+/g, "").replace(/=+$/, "");
    var out = "";
    var bits = 0;
    var n = 0;
    for (var i = 0; i < s.length; i++) {
      var v = b64.indexOf(s.charAt(i));
      if (v < 0) throw new Error("InvalidCharacterError");
      n = (n << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += String.fromCharCode((n >> bits) & 255);
      }
    }
    return out;
  }
  function btoa(s) {
    s = "" + s;
    var out = "";
    for (var i = 0; i < s.length; i += 3) {
      var a = s.charCodeAt(i);
      var b = s.charCodeAt(i + 1);
      var c = s.charCodeAt(i + 2);
      if (a > 255 || b > 255 || c > 255) throw new Error("InvalidCharacterError");
      var n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out += b64.charAt((n >> 18) & 63) + b64.charAt((n >> 12) & 63);
      out += i + 1 < s.length ? b64.charAt((n >> 6) & 63) : "=";
      out += i + 2 < s.length ? b64.charAt(n & 63) : "=";
    }
    return out;
  }

  var noop = function () {};
  var storage = { getItem: function () { return null; }, setItem: noop, removeItem: noop, clear: noop };
  var globals = {
    window: g,
    self: g,
    top: g,
    parent: g,
    document: document,
    $: $,
    jQuery: $,
    atob: typeof g.atob === "function" ? g.atob : atob,
    btoa: typeof g.btoa === "function" ? g.btoa : btoa,
    location: { href: "", protocol: "https:", host: "", hostname: "", pathname: "/", search: "", hash: "", assign: noop, replace: noop, reload: noop },
    navigator: { userAgent: "Mozilla/5.0", language: "zh-CN", languages: ["zh-CN"], platform: "", cookieEnabled: true },
    screen: { width: 1280, height: 800 },
    history: { pushState: noop, replaceState: noop, back: noop },
    localStorage: storage,
    sessionStorage: storage,
    console: { log: noop, info: noop, warn: noop, error: noop, debug: noop },
    alert: noop,
    confirm: function () { return false; },
    prompt: function () { return null; },
    setTimeout: later,
    setInterval: later,
    requestAnimationFrame: later,
    setImmediate: later,
    clearTimeout: function (id) { cancelled[id] = true; },
    clearInterval: function (id) { cancelled[id] = true; },
    addEventListener: function (type, fn) {
      if (type === "load" || type === "DOMContentLoaded") later(fn);
    },
    removeEventListener: noop,
    innerWidth: 1280,
    innerHeight: 800,
  };
  for (var k in globals) g[k] = globals[k];

  g.__copyhound_out = out;
  g.__copyhound_setup = function (json) {
    var list = JSON.parse(json);
    for (var i = 0; i < list.length; i++) {
      var e = list[i];
      var el;
      if (e.tag === "body") el = body;
      else if (e.tag === "head") el = head;
      else if (e.tag === "html") el = documentElement;
      else el = new Element(e.tag, e.id, e.classes.join(" "), true);
      if (e.tag === "canvas") el._canvas = e.canvas;
      if (e.id && !byId[e.id]) byId[e.id] = el;
      all[all.length] = el;
    }
  };
  // What was drawn on the page's canvases and on attached ones its scripts made, as
  // [canvas index or null, text, x, y, font px].
  g.__copyhound_drawing = function () {
    var list = [];
    for (var i = 0; i < drawn.length; i++) {
      var d = drawn[i];
      var el = d[0];
      if (!(el instanceof Element) || el._canvas === undefined) continue;
      if (el._canvas < 0 && !el._attached) continue;
      defineProperty(list, list.length, {
        value: [el._canvas >= 0 ? el._canvas : null, d[1], d[2], d[3], d[4]],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return list;
  };
  g.__copyhound_run_deferred = function () {
    document.readyState = "complete";
    var failed = 0;
    for (var i = 0; i < deferred.length; i++) {
      if (cancelled[i + 1]) continue;
      try {
        apply(deferred[i], g, []);
      } catch (e) {
        failed++;
      }
    }
    return failed;
  };
})();
