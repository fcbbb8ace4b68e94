#!/usr/bin/env python3
"""Print a crate's public API, one item per line, sorted, from its rustdoc JSON.

Usage: scripts/public-api.py target/public-api/doc/zkrs_client.json

Lines sort by the text after their attributes: the same listing from run to run, and a changed
attribute shows in a diff as a changed line.

The JSON comes from (stable toolchain, rustdoc's JSON output unlocked with RUSTC_BOOTSTRAP):
    RUSTC_BOOTSTRAP=1 cargo rustdoc -p zkrs-client --all-features -- \
        -Z unstable-options --output-format json
Written for format_version 57 (it refuses other versions rather than print a wrong listing).
scripts/public-api.sh builds every library crate's JSON and compares the listings with the
committed public-api/<crate>.txt.

What is listed, walking from the crate root through public modules and re-exports:
- every item under each public path that names it (a re-export lists the item it names under
  the re-exported path); modules, functions (`async`, `const`, `unsafe` shown), structs and
  their public fields, enums and their variants, unions, traits and their items, constants
  and statics with their types, type aliases, macros;
- inherent methods, associated constants and types of listed types (a generic impl's items as
  `Type<T>::item`, the impl's bounds joined to the item's where clause); a trait's provided
  methods end in `{ .. }`, its defaulted constants in `= _`;
- `impl Trait for Type` lines for trait impls of listed types and of listed traits, with the
  impl's associated types; auto-trait impls (Send, Sync, Unpin, UnwindSafe, RefUnwindSafe,
  Freeze, UnsafeUnpin) and blanket impls (`blanket_impl` set) are left out, so the listing does
  not churn with private fields or dependencies; impls written here for other crates' types
  (`impl From<Local> for Foreign`) are listed too;
- the attributes that make a promise: #[non_exhaustive], #[must_use], #[deprecated].
Types are rendered with resolved paths (`core::option::Option<u32>`), so a signature that
changes which `Error` it names shows up. A type of another workspace crate is named by that
crate's public path when its JSON sits next to this one (rustdoc names it by its defining
module otherwise).

Re-exports from another workspace crate are listed in full under this crate's path when that
crate's JSON sits next to this one (same directory, `<crate_name>.json`); otherwise, and for
re-exports of a whole crate (`pub use zkrs_client as client;`, `pub use zkrs_client::*;`, whose
items have their own listing), a line `pub use this::path = other::path` is printed. So the
facade `zkrs` lists its re-exports of zkrs-client, zkrs-codec and zkrs-recipes as such lines.

Items marked #[doc(hidden)] and everything inside a hidden module (the `__private` modules)
are left out: rustdoc's JSON already drops them (without --document-hidden-items); the script
also skips anything whose attributes still say doc(hidden).
"""

import json
import os
import sys

FORMAT_VERSION = 57
AUTO_TRAITS = {"Send", "Sync", "Unpin", "UnwindSafe", "RefUnwindSafe", "Freeze", "UnsafeUnpin"}


class Crate:
    """One rustdoc JSON document."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("format_version") != FORMAT_VERSION:
            sys.exit(
                f"{path}: rustdoc JSON format_version {doc.get('format_version')}, "
                f"this script reads {FORMAT_VERSION}: update scripts/public-api.py"
            )
        self.file = path
        self.index = doc["index"]
        self.paths = doc["paths"]
        self.root = str(doc["root"])
        self.name = self.index[self.root]["name"]
        self.external = {k: v["name"] for k, v in doc["external_crates"].items()}
        # Public path -> id, for this crate's own items (for resolving other crates' references).
        self.by_path = {}
        self.by_name = {}
        for id_, p in self.paths.items():
            if p["crate_id"] == 0:
                self.by_path[tuple(p["path"])] = id_
                self.by_name.setdefault((p["path"][-1], p["kind"]), []).append(id_)
        self.public = self.public_paths()

    def public_paths(self):
        """id -> the shortest public path naming it (then the first in sort order).

        `paths` names an item by its defining module, private or not (`zkrs_codec::error::
        DecodeError`); users name it by where it is re-exported (`zkrs_codec::DecodeError`)."""
        best = {}
        queue = [(self.root, (self.name,))]
        seen = set()
        while queue:
            queue.sort(key=lambda x: (len(x[1]), x[1]))
            mod_id, mpath = queue.pop(0)
            if mod_id in seen:
                continue
            seen.add(mod_id)
            for child in self.index[mod_id]["inner"]["module"]["items"]:
                item = self.index.get(str(child))
                if item is None or Api.hidden(item):
                    continue
                (kind, inner), = item["inner"].items()
                if kind == "use":
                    tid = str(inner["id"]) if inner.get("id") is not None else None
                    target = self.index.get(tid) if tid else None
                    if target is None or target["crate_id"] != 0:
                        continue
                    if inner["is_glob"]:
                        if "module" in target["inner"]:
                            queue.append((tid, mpath))  # its items land in this module
                        continue
                    name, id_ = inner["name"], tid
                    kind = next(iter(target["inner"]))
                elif kind == "impl":
                    continue
                else:
                    name, id_ = item["name"], str(child)
                p = mpath + (name,)
                if id_ not in best or (len(p), p) < (len(best[id_]), best[id_]):
                    best[id_] = p
                if kind == "module":
                    queue.append((id_, p))
        return {k: "::".join(v) for k, v in best.items()}


class Api:
    def __init__(self, main_json):
        self.main = Crate(main_json)
        self.dir = os.path.dirname(os.path.abspath(main_json))
        self.others = {}
        self.lines = set()
        self.walked = set()  # (crate file, item id, path) already listed
        self.stack = []  # modules being listed, against glob re-export cycles

    # ---- other workspace crates ---------------------------------------------------------
    def other(self, crate_name):
        if crate_name not in self.others:
            f = os.path.join(self.dir, crate_name + ".json")
            self.others[crate_name] = Crate(f) if crate_name != self.main.name and os.path.exists(f) else None
        return self.others[crate_name]

    def resolve_external(self, c, id_):
        """(crate, id) in a loaded JSON for an item `c` refers to by id, or None."""
        id_ = str(id_)
        if id_ in c.index and c.index[id_]["crate_id"] == 0:
            return c, id_
        p = c.paths.get(id_)
        if p is None or p["crate_id"] == 0:
            return None
        other = self.other(p["path"][0])
        if other is None:
            return None
        key = tuple(p["path"])
        if key in other.by_path:
            return other, other.by_path[key]
        same = [i for i in other.by_name.get((p["path"][-1], p["kind"]), []) if i in other.index]
        if len(same) == 1:
            return other, same[0]
        return None

    def type_path(self, c, id_, written):
        """The resolved path of the item `id_` in crate document `c`."""
        if id_ is None:
            return written
        id_ = str(id_)
        p = c.paths.get(id_)
        if p is None:
            return written
        if p["crate_id"] == 0:
            return c.public.get(id_) or "::".join(p["path"])
        r = self.resolve_external(c, id_)
        if r is not None:
            oc, oid = r
            return oc.public.get(oid) or "::".join(oc.paths[oid]["path"])
        return "::".join(p["path"])

    # ---- types --------------------------------------------------------------------------
    def ty(self, c, t):
        if t is None:
            return "()"
        (k, v), = t.items()
        if k == "resolved_path":
            return self.path(c, v)
        if k == "dyn_trait":
            parts = [self.poly_trait(c, pt) for pt in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if k == "generic":
            return v
        if k == "primitive":
            return v
        if k == "function_pointer":
            return self.fn_pointer(c, v)
        if k == "tuple":
            if len(v) == 1:
                return "(" + self.ty(c, v[0]) + ",)"
            return "(" + ", ".join(self.ty(c, x) for x in v) + ")"
        if k == "slice":
            return "[" + self.ty(c, v) + "]"
        if k == "array":
            return "[" + self.ty(c, v["type"]) + "; " + v["len"] + "]"
        if k == "pat":
            return self.ty(c, v["type"])
        if k == "impl_trait":
            return "impl " + self.bounds(c, v)
        if k == "infer":
            return "_"
        if k == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(c, v["type"])
        if k == "borrowed_ref":
            s = "&"
            if v.get("lifetime"):
                s += v["lifetime"] + " "
            if v["is_mutable"]:
                s += "mut "
            return s + self.ty(c, v["type"])
        if k == "qualified_path":
            self_ty = self.ty(c, v["self_type"])
            name = v["name"] + self.generic_args(c, v.get("args"))
            if v.get("trait") is None:
                return f"{self_ty}::{name}"
            return f"<{self_ty} as {self.path(c, v['trait'])}>::{name}"
        raise SystemExit(f"{c.file}: unknown type kind {k}: update scripts/public-api.py")

    def path(self, c, p):
        return self.type_path(c, p.get("id"), p["path"]) + self.generic_args(c, p.get("args"))

    def poly_trait(self, c, pt):
        hr = self.hrtb(c, pt.get("generic_params", []))
        return hr + self.path(c, pt["trait"])

    def hrtb(self, c, params):
        if not params:
            return ""
        return "for<" + ", ".join(self.generic_param(c, g) for g in params) + "> "

    def fn_pointer(self, c, v):
        h = v["header"]
        s = self.hrtb(c, v.get("generic_params", []))
        s += self.header(h)
        inputs = [self.ty(c, t) if n == "_" else f"{n}: {self.ty(c, t)}" for n, t in v["sig"]["inputs"]]
        if v["sig"].get("is_c_variadic"):
            inputs.append("...")
        s += "fn(" + ", ".join(inputs) + ")"
        if v["sig"].get("output") is not None:
            s += " -> " + self.ty(c, v["sig"]["output"])
        return s

    def generic_args(self, c, a):
        if not a:
            return ""
        (k, v), = a.items() if isinstance(a, dict) else ((a, None),)
        if k == "angle_bracketed":
            parts = [self.generic_arg(c, x) for x in v["args"]]
            parts += [self.constraint(c, x) for x in v["constraints"]]
            return "<" + ", ".join(parts) + ">" if parts else ""
        if k == "parenthesized":
            s = "(" + ", ".join(self.ty(c, x) for x in v["inputs"]) + ")"
            if v.get("output") is not None:
                s += " -> " + self.ty(c, v["output"])
            return s
        if k == "return_type_notation":
            return "(..)"
        raise SystemExit(f"{c.file}: unknown generic args {k}")

    def generic_arg(self, c, x):
        if x == "infer":
            return "_"
        (k, v), = x.items()
        if k == "lifetime":
            return v
        if k == "type":
            return self.ty(c, v)
        if k == "const":
            return self.const_expr(v)
        raise SystemExit(f"{c.file}: unknown generic arg {k}")

    @staticmethod
    def const_expr(v):
        e = v.get("expr") or v.get("value") or "_"
        return e if v.get("is_literal") or not e.startswith("{") else "{ _ }"

    def constraint(self, c, x):
        s = x["name"] + self.generic_args(c, x.get("args"))
        (k, v), = x["binding"].items()
        if k == "equality":
            (tk, tv), = v.items()
            return s + " = " + (self.ty(c, tv) if tk == "type" else self.const_expr(tv))
        return s + ": " + self.bounds(c, v)

    def bounds(self, c, bs):
        return " + ".join(self.bound(c, b) for b in bs)

    def bound(self, c, b):
        (k, v), = b.items()
        if k == "trait_bound":
            m = {"none": "", "maybe": "?", "maybe_const": "~const "}.get(v.get("modifier", "none"), "")
            return self.hrtb(c, v.get("generic_params", [])) + m + self.path(c, v["trait"])
        if k == "outlives":
            return v
        if k == "use":
            args = []
            for a in v:
                if isinstance(a, dict):
                    ((_, name),) = a.items()
                    args.append(name)
                else:
                    args.append(a)
            return "use<" + ", ".join(args) + ">"
        raise SystemExit(f"{c.file}: unknown bound {k}")

    # ---- generics -----------------------------------------------------------------------
    def generic_param(self, c, g):
        (k, v), = g["kind"].items()
        if k == "lifetime":
            return g["name"] + (": " + " + ".join(v["outlives"]) if v.get("outlives") else "")
        if k == "type":
            s = g["name"]
            if v.get("bounds"):
                s += ": " + self.bounds(c, v["bounds"])
            if v.get("default") is not None:
                s += " = " + self.ty(c, v["default"])
            return s
        if k == "const":
            s = f"const {g['name']}: {self.ty(c, v['type'])}"
            if v.get("default") is not None:
                s += " = " + v["default"]
            return s
        raise SystemExit(f"{c.file}: unknown generic param {k}")

    def generics(self, c, gen):
        ps = [
            self.generic_param(c, g)
            for g in gen["params"]
            if not (("type" in g["kind"]) and g["kind"]["type"].get("is_synthetic"))
        ]
        return "<" + ", ".join(ps) + ">" if ps else ""

    def where_clause(self, c, gen):
        preds = []
        for w in gen["where_predicates"]:
            (k, v), = w.items()
            if k == "bound_predicate":
                preds.append(
                    self.hrtb(c, v.get("generic_params", [])) + self.ty(c, v["type"]) + ": " + self.bounds(c, v["bounds"])
                )
            elif k == "lifetime_predicate":
                preds.append(v["lifetime"] + ": " + " + ".join(v["outlives"]))
            elif k == "eq_predicate":
                (tk, tv), = v["rhs"].items()
                rhs = self.ty(c, tv) if tk == "type" else self.const_expr(tv)
                preds.append(self.ty(c, v["lhs"]) + " = " + rhs)
        return " where " + ", ".join(preds) if preds else ""

    # ---- items --------------------------------------------------------------------------
    @staticmethod
    def hidden(item):
        return any("doc(hidden)" in json.dumps(a).replace(" ", "") for a in item.get("attrs", []))

    @staticmethod
    def attrs(item):
        out = []
        dep = item.get("deprecation")
        if dep:
            args = []
            if dep.get("since"):
                args.append(f'since = "{dep["since"]}"')
            if dep.get("note"):
                args.append(f'note = {json.dumps(dep["note"])}')
            out.append("#[deprecated" + ("(" + ", ".join(args) + ")" if args else "") + "]")
        for a in item.get("attrs", []):
            if a == "non_exhaustive":
                out.append("#[non_exhaustive]")
            elif isinstance(a, dict) and "must_use" in a:
                r = a["must_use"].get("reason")
                out.append("#[must_use" + (f" = {json.dumps(r)}" if r else "") + "]")
        return "".join(x + " " for x in out)

    @staticmethod
    def header(h):
        s = ""
        if h.get("is_const"):
            s += "const "
        if h.get("is_async"):
            s += "async "
        if h.get("is_unsafe"):
            s += "unsafe "
        abi = h.get("abi", "Rust")
        if abi != "Rust":
            name = abi if isinstance(abi, str) else next(iter(abi))
            s += f'extern "{name}" '
        return s

    def fn_sig(self, c, f, path):
        inputs = []
        for n, t in f["sig"]["inputs"]:
            if n == "self":
                if t == {"generic": "Self"}:
                    inputs.append("self")
                    continue
                if "borrowed_ref" in t and t["borrowed_ref"]["type"] == {"generic": "Self"}:
                    r = t["borrowed_ref"]
                    inputs.append("&" + (r["lifetime"] + " " if r.get("lifetime") else "") + ("mut " if r["is_mutable"] else "") + "self")
                    continue
            inputs.append(f"{n}: {self.ty(c, t)}")
        if f["sig"].get("is_c_variadic"):
            inputs.append("...")
        s = self.header(f["header"]) + "fn " + path + self.generics(c, f["generics"]) + "(" + ", ".join(inputs) + ")"
        if f["sig"].get("output") is not None:
            s += " -> " + self.ty(c, f["sig"]["output"])
        return s + self.where_clause(c, f["generics"])

    def emit(self, line):
        self.lines.add(line)

    @staticmethod
    def sort_key(line):
        """Lines sort by what follows their attributes, so that adding #[must_use] to an item
        shows in a diff as a changed line rather than one removed here and added there."""
        rest = line
        while rest.startswith("#["):
            i, depth, quoted = 1, 0, False
            while i < len(rest):
                ch = rest[i]
                if quoted:
                    if ch == "\\":
                        i += 1
                    elif ch == '"':
                        quoted = False
                elif ch == '"':
                    quoted = True
                elif ch == "[":
                    depth += 1
                elif ch == "]":
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            rest = rest[i + 1 :].lstrip(" ")
        return (rest, line)

    def walk(self, c, id_, path):
        """List item `id_` of crate document `c` under the public path `path` (a list)."""
        id_ = str(id_)
        key = (c.file, id_, tuple(path))
        if key in self.walked:
            return
        self.walked.add(key)
        item = c.index.get(id_)
        if item is None or self.hidden(item):
            return
        (kind, inner), = item["inner"].items()
        p = "::".join(path)
        a = self.attrs(item)
        if kind == "module":
            if not inner.get("is_crate") or len(path) > 1:
                self.emit(f"{a}pub mod {p}")
            if (c.file, id_) in self.stack:
                return  # `pub use super::*` and the like: its items are listed already
            self.stack.append((c.file, id_))
            for child in inner["items"]:
                self.child(c, child, path)
            self.stack.pop()
        elif kind == "use":
            self.use(c, item, inner, path)
        elif kind == "function":
            self.emit(a + "pub " + self.fn_sig(c, inner, p))
        elif kind == "struct":
            g = self.generics(c, inner["generics"])
            w = self.where_clause(c, inner["generics"])
            sk = inner["kind"]
            if isinstance(sk, dict) and "tuple" in sk:
                fields = []
                for fid in sk["tuple"]:
                    fitem = c.index.get(str(fid)) if fid is not None else None
                    if fitem is None or self.hidden(fitem):
                        fields.append("_")
                    else:
                        fields.append("pub " + self.ty(c, fitem["inner"]["struct_field"]))
                self.emit(f"{a}pub struct {p}{g}({', '.join(fields)}){w}")
            else:
                self.emit(f"{a}pub struct {p}{g}{w}")
                if isinstance(sk, dict) and "plain" in sk:
                    self.fields(c, sk["plain"]["fields"], p)
            self.type_impls(c, inner["impls"], p)
        elif kind == "union":
            g = self.generics(c, inner["generics"])
            self.emit(f"{a}pub union {p}{g}{self.where_clause(c, inner['generics'])}")
            self.fields(c, inner["fields"], p)
            self.type_impls(c, inner["impls"], p)
        elif kind == "enum":
            g = self.generics(c, inner["generics"])
            self.emit(f"{a}pub enum {p}{g}{self.where_clause(c, inner['generics'])}")
            for vid in inner["variants"]:
                self.variant(c, vid, p)
            self.type_impls(c, inner["impls"], p)
        elif kind == "trait":
            s = a + "pub "
            if inner.get("is_unsafe"):
                s += "unsafe "
            if inner.get("is_auto"):
                s += "auto "
            s += "trait " + p + self.generics(c, inner["generics"])
            if inner["bounds"]:
                s += ": " + self.bounds(c, inner["bounds"])
            self.emit(s + self.where_clause(c, inner["generics"]))
            for iid in inner["items"]:
                self.assoc_item(c, iid, p, in_trait=True)
            for iid in inner["implementations"]:
                self.trait_impl(c, iid)
        elif kind == "trait_alias":
            self.emit(f"{a}pub trait {p}{self.generics(c, inner['generics'])} = {self.bounds(c, inner['params'])}")
        elif kind == "type_alias":
            g = self.generics(c, inner["generics"])
            self.emit(f"{a}pub type {p}{g}{self.where_clause(c, inner['generics'])} = {self.ty(c, inner['type'])}")
        elif kind == "constant":
            self.emit(f"{a}pub const {p}: {self.ty(c, inner['type'])}")
        elif kind == "static":
            mut = "mut " if inner.get("is_mutable") else ""
            uns = "unsafe " if inner.get("is_unsafe") else ""
            self.emit(f"{a}pub {uns}static {mut}{p}: {self.ty(c, inner['type'])}")
        elif kind == "macro":
            self.emit(f"{a}pub macro {p}!")
        elif kind == "proc_macro":
            pk = inner.get("kind", "bang")
            self.emit(f"{a}pub proc_macro {'#[derive] ' if pk == 'derive' else '#[attr] ' if pk == 'attr' else ''}{p}!")
        elif kind in ("extern_crate", "primitive", "impl"):
            pass
        else:
            raise SystemExit(f"{c.file}: unknown item kind {kind}: update scripts/public-api.py")

    def child(self, c, child, path):
        item = c.index.get(str(child))
        if item is None or self.hidden(item):
            return
        (kind, _), = item["inner"].items()
        if kind == "use":
            self.walk(c, child, path)  # a `use` names its own path
        elif kind == "impl":
            return
        else:
            self.walk(c, child, path + [item["name"]])

    def use(self, c, item, u, path):
        target = u.get("id")
        if u["is_glob"]:
            r = self.resolve_external(c, target) if target is not None else None
            if r is not None:
                oc, oid = r
                titem = oc.index[oid]
                (tk, tv), = titem["inner"].items()
                if tk == "module" and not tv.get("is_crate"):
                    if (oc.file, oid) in self.stack:
                        return
                    for ch in tv["items"]:
                        self.child(oc, ch, path)
                    return
                if tk == "enum":
                    for vid in tv["variants"]:
                        vitem = oc.index.get(str(vid))
                        if vitem is not None:
                            self.variant(oc, vid, "::".join(path), standalone=True)
                    return
            self.emit(f"pub use {'::'.join(path + ['*'])} = {self.source(c, target, u['source'])}::*")
            return
        newpath = path + [u["name"]]
        r = self.resolve_external(c, target) if target is not None else None
        if r is not None:
            oc, oid = r
            titem = oc.index[oid]
            if not ("module" in titem["inner"] and titem["inner"]["module"].get("is_crate")):
                self.walk(oc, oid, newpath)
                return
        self.emit(f"pub use {'::'.join(newpath)} = {self.source(c, target, u['source'])}")

    def source(self, c, target, written):
        if target is None:
            return written
        if str(target) in c.paths:
            return self.type_path(c, target, written)
        # A crate re-export: its id names the crate root, which `paths` may not hold.
        ext = c.external.get(str(target))
        return ext or written

    def fields(self, c, fids, p):
        for fid in fids:
            f = c.index.get(str(fid))
            if f is None or self.hidden(f):
                continue
            self.emit(f"{self.attrs(f)}pub {p}::{f['name']}: {self.ty(c, f['inner']['struct_field'])}")

    def variant(self, c, vid, p, standalone=False):
        v = c.index.get(str(vid))
        if v is None or self.hidden(v):
            return
        inner = v["inner"]["variant"]
        k = inner["kind"]
        s = f"{self.attrs(v)}pub {p}::{v['name']}"
        if isinstance(k, dict) and "tuple" in k:
            parts = []
            for fid in k["tuple"]:
                f = c.index.get(str(fid)) if fid is not None else None
                parts.append("_" if f is None or self.hidden(f) else self.ty(c, f["inner"]["struct_field"]))
            s += "(" + ", ".join(parts) + ")"
        elif isinstance(k, dict) and "struct" in k:
            parts = []
            for fid in k["struct"]["fields"]:
                f = c.index.get(str(fid))
                if f is not None and not self.hidden(f):
                    parts.append(f"{f['name']}: {self.ty(c, f['inner']['struct_field'])}")
            if k["struct"].get("has_stripped_fields"):
                parts.append("..")
            s += " { " + ", ".join(parts) + " }"
        if inner.get("discriminant"):
            s += " = " + inner["discriminant"]["expr"]
        self.emit(s)

    def impl_bounds(self, c, gen):
        """An inherent impl's bounds on its parameters and its where clause, as predicates."""
        preds = []
        for g in gen["params"]:
            (k, v), = g["kind"].items()
            if k == "lifetime" and v.get("outlives"):
                preds.append(g["name"] + ": " + " + ".join(v["outlives"]))
            elif k == "type" and v.get("bounds") and not v.get("is_synthetic"):
                preds.append(g["name"] + ": " + self.bounds(c, v["bounds"]))
        w = self.where_clause(c, gen)
        if w:
            preds.append(w[len(" where "):])
        return preds

    def assoc_item(self, c, iid, p, in_trait, outer_where=()):
        it = c.index.get(str(iid))
        if it is None or self.hidden(it):
            return
        if not in_trait and it.get("visibility") != "public":
            return
        (k, v), = it["inner"].items()
        a = self.attrs(it)
        q = f"{p}::{it['name']}"
        if k == "function":
            provided = " { .. }" if in_trait and v.get("has_body") else ""
            sig = self.fn_sig(c, v, q)
            if outer_where:
                sig += (", " if " where " in sig else " where ") + ", ".join(outer_where)
            self.emit(a + "pub " + sig + provided)
        elif k == "assoc_const":
            s = f"{a}pub const {q}: {self.ty(c, v['type'])}"
            if in_trait and v.get("value") is not None:
                s += " = _"
            self.emit(s)
        elif k == "assoc_type":
            s = f"{a}pub type {q}{self.generics(c, v['generics'])}"
            if v.get("bounds"):
                s += ": " + self.bounds(c, v["bounds"])
            s += self.where_clause(c, v["generics"])
            if v.get("type") is not None:
                s += " = " + self.ty(c, v["type"])
            self.emit(s)

    def type_impls(self, c, impl_ids, p):
        for iid in impl_ids:
            im_item = c.index.get(str(iid))
            if im_item is None or self.hidden(im_item):
                continue
            im = im_item["inner"]["impl"]
            if im["trait"] is None:
                if im.get("is_synthetic") or im.get("blanket_impl") is not None:
                    continue
                # `impl<T: Bound> Type<T>`: the items are listed as `Type<T>::item ... where
                # T: Bound`, so a changed bound on the impl shows up.
                args = ""
                if "resolved_path" in im["for"]:
                    args = self.generic_args(c, im["for"]["resolved_path"].get("args"))
                where = self.impl_bounds(c, im["generics"])
                for it in im["items"]:
                    self.assoc_item(c, it, p + args, in_trait=False, outer_where=where)
            else:
                self.trait_impl(c, iid)

    def trait_impl(self, c, iid):
        im_item = c.index.get(str(iid))
        if im_item is None or self.hidden(im_item):
            return
        im = im_item["inner"]["impl"]
        if im["trait"] is None or im.get("is_synthetic") or im.get("blanket_impl") is not None:
            return
        trait_name = im["trait"]["path"].split("::")[-1]
        if trait_name in AUTO_TRAITS:
            return
        s = ""
        if im.get("is_unsafe"):
            s += "unsafe "
        s += "impl" + self.generics(c, im["generics"]) + " "
        if im.get("is_negative"):
            s += "!"
        s += self.path(c, im["trait"]) + " for " + self.ty(c, im["for"])
        s += self.where_clause(c, im["generics"])
        assoc = []
        for it in im["items"]:
            x = c.index.get(str(it))
            if x is None:
                continue
            (k, v), = x["inner"].items()
            if k == "assoc_type" and v.get("type") is not None:
                g = self.generics(c, v["generics"])
                w = self.where_clause(c, v["generics"])
                assoc.append(f"type {x['name']}{g} = {self.ty(c, v['type'])}{w}")
            elif k == "assoc_const":
                assoc.append(f"const {x['name']}: {self.ty(c, v['type'])}")
        if assoc:
            s += " { " + "; ".join(sorted(assoc)) + " }"
        self.emit(s)

    def run(self):
        c = self.main
        self.walk(c, c.root, [c.name])
        # Impls written in this crate for foreign types (`impl From<Local> for Foreign`) are
        # part of its surface too, though no listed type or trait carries them.
        for iid, it in c.index.items():
            if it["crate_id"] != 0 or "impl" not in it["inner"]:
                continue
            im = it["inner"]["impl"]
            f = im["for"]
            if im["trait"] is not None and "resolved_path" in f:
                tid = f["resolved_path"].get("id")
                p = c.paths.get(str(tid)) if tid is not None else None
                if p is not None and p["crate_id"] != 0:
                    self.trait_impl(c, iid)
        return sorted(self.lines, key=self.sort_key)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/public-api.py <crate rustdoc JSON>")
    out = Api(sys.argv[1]).run()
    sys.stdout.write("".join(line + "\n" for line in out))


if __name__ == "__main__":
    main()
