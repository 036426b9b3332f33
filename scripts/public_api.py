#!/usr/bin/env python3
"""The public API of a crate as sorted text lines, one per item, from rustdoc's JSON output.

    python3 scripts/public_api.py target/doc/modelctx_core.json > api/modelctx-core.txt

Every public item reachable from the crate root (modules, types, their public fields and
variants, inherent methods, trait impls written in this crate, traits and their items,
functions, constants, statics, macros and re-exports), with signatures. Hidden items
(`#[doc(hidden)]`) are left out, as rustdoc leaves them out. `scripts/public-api.sh` builds the
JSON with the installed nightly toolchain and compares against the checked-in snapshot.
"""
import json
import sys

# The rustdoc JSON layout this script reads (nightly 2026-05-19).
FORMAT_VERSION = 57
# Impls the compiler adds for a derive, not part of what a user writes against.
COMPILER_IMPLS = ("StructuralPartialEq",)


def main():
    doc = json.load(open(sys.argv[1]))
    if doc.get("format_version") != FORMAT_VERSION:
        # Another nightly writes another JSON layout: refuse rather than print a wrong API.
        sys.exit(f"public_api.py reads rustdoc JSON format {FORMAT_VERSION}, this is "
                 f"{doc.get('format_version')}: update the script with the nightly")
    index = doc["index"]
    paths = doc["paths"]
    lines = set()

    def name_of(id_):
        p = paths.get(str(id_))
        return "::".join(p["path"]) if p else None

    def generic_args(args):
        if not args:
            return ""
        if "angle_bracketed" in args:
            a = args["angle_bracketed"]
            parts = []
            for arg in a.get("args", []):
                if "type" in arg:
                    parts.append(ty(arg["type"]))
                elif "lifetime" in arg:
                    parts.append(arg["lifetime"])
                elif "const" in arg:
                    parts.append(arg["const"].get("expr", "_"))
                else:
                    parts.append("_")
            for c in a.get("constraints", []):
                binding = c.get("binding", {})
                if "equality" in binding:
                    eq = binding["equality"]
                    value = ty(eq["type"]) if "type" in eq else str(eq)
                    parts.append(f"{c['name']} = {value}")
                else:
                    parts.append(f"{c['name']}: {bounds(binding.get('constraint', []))}")
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in args:
            p = args["parenthesized"]
            out = "(" + ", ".join(ty(t) for t in p["inputs"]) + ")"
            if p.get("output"):
                out += " -> " + ty(p["output"])
            return out
        return ""

    def path_text(p):
        # The item's own name, as rustdoc resolved it: stable when imports or private modules
        # change, which are not API changes.
        known = paths.get(str(p.get("id")))
        base = known["path"][-1] if known else p["path"].split("::")[-1]
        return base + generic_args(p.get("args"))

    def bounds(bs):
        out = []
        for b in bs:
            if "trait_bound" in b:
                tb = b["trait_bound"]
                modifier = "?" if tb.get("modifier") == "maybe" else ""
                out.append(modifier + path_text(tb["trait"]))
            elif "outlives" in b:
                out.append(b["outlives"])
            elif "use" in b:
                out.append("use<..>")
        return " + ".join(out)

    def ty(t):
        if t is None:
            return "()"
        k, v = next(iter(t.items()))
        if k == "resolved_path":
            return path_text(v)
        if k == "generic":
            return v
        if k == "primitive":
            return v
        if k == "tuple":
            return "(" + ", ".join(ty(x) for x in v) + ")"
        if k == "slice":
            return "[" + ty(v) + "]"
        if k == "array":
            return f"[{ty(v['type'])}; {v['len']}]"
        if k == "borrowed_ref":
            life = (v["lifetime"] + " ") if v.get("lifetime") else ""
            mut = "mut " if v.get("is_mutable") else ""
            return f"&{life}{mut}{ty(v['type'])}"
        if k == "raw_pointer":
            return ("*mut " if v.get("is_mutable") else "*const ") + ty(v["type"])
        if k == "impl_trait":
            return "impl " + bounds(v)
        if k == "dyn_trait":
            traits = [path_text(p["trait"]) for p in v["traits"]]
            if v.get("lifetime"):
                traits.append(v["lifetime"])
            return "dyn " + " + ".join(traits)
        if k == "qualified_path":
            trait = path_text(v["trait"]) if v.get("trait") and v["trait"].get("path") else None
            if trait is None:
                return f"{ty(v['self_type'])}::{v['name']}"
            return f"<{ty(v['self_type'])} as {trait}>::{v['name']}"
        if k == "function_pointer":
            sig = v["sig"]
            ins = ", ".join(ty(x[1]) for x in sig["inputs"])
            out = f" -> {ty(sig['output'])}" if sig.get("output") else ""
            return f"fn({ins}){out}"
        if k == "infer":
            return "_"
        return k

    def generics_decl(g):
        params = []
        for p in g.get("params", []):
            kind = p["kind"]
            if "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                b = bounds(kind["type"].get("bounds", []))
                d = kind["type"].get("default")
                params.append(p["name"] + (f": {b}" if b else "") + (f" = {ty(d)}" if d else ""))
            elif "lifetime" in kind:
                params.append(p["name"])
            elif "const" in kind:
                params.append(f"const {p['name']}: {ty(kind['const']['type'])}")
        return "<" + ", ".join(params) + ">" if params else ""

    def where_clause(g):
        preds = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                preds.append(f"{ty(bp['type'])}: {bounds(bp['bounds'])}")
        return " where " + ", ".join(preds) if preds else ""

    def fn_text(item, prefix):
        f = item["inner"]["function"]
        sig = f["sig"]
        header = f.get("header", {})
        quals = "".join(
            q for q, on in (("const ", header.get("is_const")), ("async ", header.get("is_async")),
                            ("unsafe ", header.get("is_unsafe"))) if on)
        ins = []
        for name, t in sig["inputs"]:
            if name == "self":
                rendered = ty(t)
                ins.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(rendered, f"self: {rendered}"))
            else:
                ins.append(f"{name}: {ty(t)}")
        out = f" -> {ty(sig['output'])}" if sig.get("output") else ""
        return (f"{quals}fn {prefix}{item['name']}{generics_decl(f['generics'])}"
                f"({', '.join(ins)}){out}{where_clause(f['generics'])}")

    seen = set()

    def walk(id_, path):
        item = index.get(str(id_))
        if item is None:
            return
        kind, inner = next(iter(item["inner"].items()))
        name = item.get("name")
        here = f"{path}::{name}" if name else path
        if kind == "module":
            if (id_, path) in seen:
                return
            seen.add((id_, path))
            lines.add(f"pub mod {here}")
            for child in inner["items"]:
                walk(child, here)
        elif kind == "use":
            target = inner.get("id")
            local = target is not None and str(target) in index
            if inner.get("is_glob"):
                if local:
                    if ("glob", target, path) in seen:  # `pub use super::*` loops
                        return
                    seen.add(("glob", target, path))
                    t = index[str(target)]
                    if "module" in t["inner"]:
                        for child in t["inner"]["module"]["items"]:
                            walk(child, path)
                    return
                lines.add(f"pub use {path}::{inner['source']}::*")
                return
            if local:
                target_item = dict(index[str(target)])
                target_item["name"] = inner["name"]
                index[f"use:{id_}"] = target_item
                walk(f"use:{id_}", path)
            else:
                lines.add(f"pub use {path}::{inner['name']} = {inner['source']}")
        elif kind in ("struct", "enum", "union", "trait", "type_alias"):
            g = generics_decl(inner.get("generics", {}))
            if kind == "type_alias":
                lines.add(f"pub type {here}{g} = {ty(inner['type'])}")
                return
            if kind == "trait":
                lines.add(f"pub trait {here}{g}" + (f": {bounds(inner['bounds'])}" if inner.get("bounds") else ""))
                for child in inner["items"]:
                    member(child, here, trait=True)
                return
            exhaustive = not any("non_exhaustive" in json.dumps(a) for a in item.get("attrs", []))
            lines.add(f"{'' if exhaustive else '#[non_exhaustive] '}pub {kind} {here}{g}")
            if kind == "struct":
                k = inner["kind"]
                fields = k.get("plain", {}).get("fields", []) if isinstance(k, dict) else []
                if isinstance(k, dict) and "tuple" in k:
                    fields = [f for f in k["tuple"] if f is not None]
                for f in fields:
                    fi = index[str(f)]
                    lines.add(f"pub {here}::{fi['name']}: {ty(fi['inner']['struct_field'])}")
            if kind == "enum":
                for v in inner["variants"]:
                    vi = index[str(v)]
                    vk = vi["inner"]["variant"]["kind"]
                    payload = ""
                    if isinstance(vk, dict) and "tuple" in vk:
                        payload = "(" + ", ".join(
                            ty(index[str(f)]["inner"]["struct_field"]) if f is not None else "_"
                            for f in vk["tuple"]) + ")"
                    elif isinstance(vk, dict) and "struct" in vk:
                        payload = " { " + ", ".join(
                            f"{index[str(f)]['name']}: {ty(index[str(f)]['inner']['struct_field'])}"
                            for f in vk["struct"]["fields"]) + " }"
                    lines.add(f"pub {here}::{vi['name']}{payload}")
            for impl_id in inner.get("impls", []):
                impl = index[str(impl_id)]["inner"]["impl"]
                if impl.get("is_synthetic") or impl.get("blanket_impl") is not None:
                    continue
                if impl.get("trait") is None:
                    for child in impl["items"]:
                        member(child, here, trait=False)
                elif impl["trait"].get("path", "").split("::")[-1] not in COMPILER_IMPLS:
                    neg = "!" if impl.get("is_negative") else ""
                    lines.add(f"impl{generics_decl(impl['generics'])} {neg}{path_text(impl['trait'])} for {ty(impl['for'])} (at {here})")
        elif kind == "function":
            lines.add("pub " + fn_text(item, path + "::"))
        elif kind == "constant":
            lines.add(f"pub const {here}: {ty(inner['type'])}")
        elif kind == "static":
            lines.add(f"pub static {here}: {ty(inner['type'])}")
        elif kind in ("macro", "proc_macro"):
            lines.add(f"pub macro {here}!")

    def member(id_, owner, trait):
        item = index.get(str(id_))
        if item is None or (not trait and item.get("visibility") != "public"):
            return
        kind, inner = next(iter(item["inner"].items()))
        if kind == "function":
            lines.add(("" if trait else "pub ") + fn_text(item, owner + "::"))
        elif kind == "assoc_const":
            lines.add(f"const {owner}::{item['name']}: {ty(inner['type'])}")
        elif kind == "assoc_type":
            lines.add(f"type {owner}::{item['name']}")

    root = doc["root"]
    walk(root, "")
    for line in sorted(l.replace(" ::", " ").lstrip(":") for l in lines):
        print(line)


main()
