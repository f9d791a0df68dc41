#!/usr/bin/env python3
"""Acceptance check: GDAL and shapely read the GIS outputs of
`gpdp release --crs EPSG:CODE` correctly.

    python scripts/ci/check_gis.py OUT_DIR --crs EPSG:27700 --draws 3 \
        --data readings.csv --x easting,northing [--data-crs EPSG:4326]
    python scripts/ci/check_gis.py OUT_DIR --crs EPSG:27700 --draws 1 \
        --bbox 500000,180000,510000,190000

OUT_DIR is the release folder; --crs the CRS the outputs must be in (with
`--reproject-to`, its target); --draws the release's --draws; the data's
bounding box comes from the data CSV's coordinate columns (in --data-crs,
default --crs) or from --bbox (in --crs).

Needs rasterio (its wheel bundles GDAL and PROJ), pyogrio and shapely, all
binary wheels. The vectors are read by pyogrio: rasterio reads only rasters,
GDAL's own bindings (`osgeo.ogr`, PyPI's GDAL) are published as source to
build against a system libgdal, and pyogrio's wheel bundles a GDAL with the
OGR GeoJSON driver, needs only numpy/packaging/certifi and is current
(fiona, the alternative, last released in 2024).

What is checked (each a line `ok ...` or `FAIL ...`; exit status 1 if any
failed or the script crashed, 2 on bad arguments):

report.json: a 2-D grid query; its `outputs` are exactly the folder's files.

paths.tif, read by GDAL (rasterio):
  * it opens as a GeoTIFF without GDAL warnings; CRS = --crs; one float64
    band per draw (= --draws = report.json's draws = path_* columns of
    paths.csv); width x height = the query grid's counts (report.json);
    band b's description is "released path b" and its unit report.json's
    data_policy.units;
  * the geotransform: gpdp writes PixelIsPoint (the tie point is the grid
    node (x_min, y_max)); GDAL reports an area-style transform, so it must be
    pixel size (dx, -dy) with origin (x_min - dx/2, y_max + dy/2), where
    dx = (x_max - x_min)/(nx - 1) etc. from report.json (rel. tol. 1e-9 of a
    cell), and AREA_OR_POINT=Point;
  * values: every row of paths.csv is located in the raster BY ITS
    COORDINATES through GDAL's geotransform, and every band there equals the
    CSV's path_b EXACTLY (float64, bit for bit: paths.csv prints each double
    in its shortest round-trip form); the four corners and the centre are
    also read with GDAL's own coordinate lookup (DatasetReader.sample), and
    raster row 0 must hold the northernmost grid row (north-up).

excursion.geojson, read by GDAL (pyogrio's OGR GeoJSON driver) AND by
shapely (from the JSON text, independently):
  * CRS WGS 84 (EPSG:4326 / OGC:CRS84), no RFC 7946-forbidden "crs" member;
    at least one feature; every geometry a non-empty, valid (shapely/GEOS)
    Polygon or MultiPolygon with positive area; GDAL's and shapely's
    geometries identical;
  * rings follow RFC 7946's right-hand rule (exteriors counter-clockwise);
  * every vertex is lon/lat (|lon| <= 180, |lat| <= 90) and lies inside the
    data's bounding box transformed to WGS 84 (by PROJ, in rasterio; the
    excursion set lives on the query grid, which may reach past the data's
    points, so the box is that of the data and the grid together), within
    1e-7 degrees (about 1 cm);
  * the set is {path_1 >= threshold}: every grid node farther than 1e-7
    degrees from its boundary is inside iff path_1 >= threshold there.

paths.qml (QGIS layer style, loaded with paths.tif) and paths.sld (OGC SLD):
  * no map.pgw, map.prj or map.png.aux.xml: the decorated map.png is not
    georeferenced (its title and colour bar would land on the ground);
  * both parse as XML with the same ascending colour ramp; the QML is a
    single-band pseudocolour renderer of band 1; interpolated as QGIS does,
    the ramp colours path_1 red above the threshold and blue below.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import math
import xml.etree.ElementTree as ET
import sys
from pathlib import Path

import numpy as np
import pyogrio
import rasterio
import shapely
from rasterio.crs import CRS
from rasterio.warp import transform as warp_transform
from shapely.geometry import Polygon, box, shape

TOL_DEG = 1e-7  # about 1 cm on the ground
WGS84 = "EPSG:4326"


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    def check(self, cond: bool, what: str, detail: str = "") -> bool:
        if cond:
            self.passed += 1
            print(f"ok   {what}")
        else:
            msg = f"{what}: {detail}" if detail else what
            self.failed.append(msg)
            print(f"FAIL {msg}")
        return bool(cond)


class GdalWarnings(logging.Handler):
    """Collects the warnings GDAL reports through rasterio's logger."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def epsg_of(s: str) -> int:
    t = s.strip()
    if not t.upper().startswith("EPSG:") or not t[5:].isdigit():
        raise argparse.ArgumentTypeError(f"expected EPSG:CODE, got {s!r}")
    return int(t[5:])


def read_paths_csv(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(v) for v in r] for r in rows[1:]], dtype=np.float64)


def rect_ring(x0: float, y0: float, x1: float, y1: float, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The rectangle's boundary, densified, counter-clockwise."""
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    xs = np.concatenate([x0 + (x1 - x0) * t, np.full(n, x1), x1 - (x1 - x0) * t, np.full(n, x0)])
    ys = np.concatenate([np.full(n, y0), y0 + (y1 - y0) * t, np.full(n, y1), y1 - (y1 - y0) * t])
    return xs, ys


def to_wgs84_polygon(crs: str, rect: tuple[float, float, float, float]) -> Polygon:
    xs, ys = rect_ring(*rect)
    lon, lat = warp_transform(crs, WGS84, xs, ys)
    return Polygon(zip(lon, lat))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the release folder (gpdp release --out)")
    ap.add_argument("--crs", required=True, type=epsg_of, help="EPSG:CODE the outputs must be in")
    ap.add_argument("--draws", required=True, type=int, help="the release's --draws")
    ap.add_argument("--data", type=Path, help="the data CSV (for its bounding box)")
    ap.add_argument("--x", help="the data CSV's two coordinate columns, e.g. easting,northing")
    ap.add_argument("--data-crs", type=epsg_of, help="CRS of the data CSV's coordinates (default --crs)")
    ap.add_argument("--bbox", help="the data's bounding box XMIN,YMIN,XMAX,YMAX in --crs, instead of --data")
    a = ap.parse_args()
    if (a.data is None) == (a.bbox is None):
        ap.error("give exactly one of --data (with --x) or --bbox")
    if a.data is not None and not a.x:
        ap.error("--data needs --x COL1,COL2")

    code = a.crs
    crs_s = f"EPSG:{code}"
    out: Path = a.out
    c = Checks()
    gdal_log = GdalWarnings()
    logging.getLogger("rasterio").addHandler(gdal_log)
    print(f"check_gis: {out} (outputs in {crs_s}, {a.draws} draw(s)); rasterio {rasterio.__version__} with GDAL "
          f"{rasterio.__gdal_version__}, pyogrio {pyogrio.__version__} with GDAL {pyogrio.__gdal_version_string__}, "
          f"shapely {shapely.__version__} with GEOS {shapely.geos_version_string}")

    # ---- report.json and paths.csv: the grid and the values --------------------------------
    report = json.loads((out / "report.json").read_text())
    q = report["query"]
    if not c.check(q.get("kind") == "grid" and len(q.get("counts", [])) == 2, "report.json: a 2-D grid query",
                   f"query is {q}"):
        return finish(c)
    (nx, ny), (xlo, ylo), (xhi, yhi) = q["counts"], q["lower"], q["upper"]
    dx, dy = (xhi - xlo) / (nx - 1), (yhi - ylo) / (ny - 1)
    threshold = float(report["threshold"])
    outputs = list(report.get("outputs", []))
    present = sorted(p.name for p in out.iterdir())
    c.check(sorted(outputs) == present and {"paths.csv", "paths.tif", "excursion.geojson"} <= set(outputs),
            "report.json: its outputs are the folder's files, paths.tif and excursion.geojson among them",
            f"outputs {outputs}, folder {present}")
    comp_draws = {comp["draws"] for comp in report["privacy"]["components"]}
    header, rows = read_paths_csv(out / "paths.csv")
    path_cols = [h for h in header if h.startswith("path_")]
    c.check(header[2:] == [f"path_{b}" for b in range(1, a.draws + 1)] and comp_draws == {a.draws},
            f"draws: --draws {a.draws} = report.json's draws = paths.csv's path_* columns",
            f"report.json says {sorted(comp_draws)}, paths.csv has columns {header}")
    c.check(rows.shape == (nx * ny, 2 + len(path_cols)), f"paths.csv: {nx}x{ny} = {nx * ny} grid nodes",
            f"{rows.shape[0]} rows of {rows.shape[1]} columns")
    xs, ys, vals = rows[:, 0], rows[:, 1], rows[:, 2:]
    ii, jj = np.rint((xs - xlo) / dx).astype(int), np.rint((ys - ylo) / dy).astype(int)
    on_grid = (np.abs(xs - (xlo + ii * dx)) <= 1e-9 * dx) & (np.abs(ys - (ylo + jj * dy)) <= 1e-9 * dy)
    nodes_ok = on_grid.all() and len(set(zip(ii.tolist(), jj.tolist()))) == nx * ny
    c.check(bool(nodes_ok), "paths.csv: its coordinates are the grid's nodes, each once",
            f"{int((~on_grid).sum())} rows off the grid of report.json")

    # ---- paths.tif --------------------------------------------------------------------------
    gdal_log.messages.clear()
    try:
        tif = rasterio.open(out / "paths.tif")
    except Exception as e:  # noqa: BLE001
        c.check(False, "paths.tif: GDAL opens it", repr(e))
        tif = None
    if tif is not None:
        with tif:
            bands = tif.read()  # (bands, rows, cols)
            c.check(tif.driver == "GTiff" and not gdal_log.messages, "paths.tif: GDAL opens it as a GeoTIFF, no warnings",
                    f"driver {tif.driver}, warnings {gdal_log.messages}")
            c.check(tif.crs is not None and tif.crs.to_epsg() == code, f"paths.tif: CRS is {crs_s}",
                    f"GDAL reads {tif.crs}")
            c.check(tif.count == a.draws, f"paths.tif: {a.draws} band(s), one per draw", f"{tif.count} bands")
            c.check(all(d == "float64" for d in tif.dtypes) and tif.nodata is None, "paths.tif: float64 bands, no nodata",
                    f"dtypes {tif.dtypes}, nodata {tif.nodata}")
            c.check((tif.width, tif.height) == (nx, ny), f"paths.tif: {nx} x {ny} pixels (the query grid)",
                    f"{tif.width} x {tif.height}")
            want_desc = tuple(f"released path {b}" for b in range(1, a.draws + 1))
            c.check(tif.descriptions == want_desc, "paths.tif: band descriptions 'released path 1' ... (1-based)",
                    f"GDAL reads {tif.descriptions}")
            unit = report.get("data_policy", {}).get("units")
            want_units = tuple(unit or "" for _ in range(a.draws))
            c.check(tuple(u or "" for u in tif.units) == want_units, f"paths.tif: band unit {unit!r} (report.json's units)",
                    f"GDAL reads {tif.units}")
            c.check(tif.tags().get("AREA_OR_POINT") == "Point", "paths.tif: raster type PixelIsPoint (AREA_OR_POINT=Point)",
                    f"tags {tif.tags()}")
            t = tif.transform
            want = (dx, 0.0, xlo - dx / 2, 0.0, -dy, yhi + dy / 2)
            got = (t.a, t.b, t.c, t.d, t.e, t.f)
            close = all(abs(g - w) <= 1e-9 * min(dx, dy) for g, w in zip(got, want))
            hint = ""
            if all(abs(g - w) <= 1e-9 * min(dx, dy) for g, w in zip(got, (dx, 0.0, xlo, 0.0, -dy, yhi))):
                hint = " (the origin is the corner node itself: half a cell off — PixelIsPoint read as PixelIsArea?)"
            c.check(close, f"paths.tif: geotransform = cell size ({dx:.6g}, -{dy:.6g}), origin "
                           f"(x_min - dx/2, y_max + dy/2) = ({want[2]:.6f}, {want[5]:.6f})",
                    f"GDAL reads a,b,c,d,e,f = {got}, want {want}{hint}")
            if bands.shape == (a.draws, ny, nx) and rows.shape[1] == 2 + a.draws:
                # Every CSV row located by its coordinates through GDAL's transform.
                cols, rws = ~t * (xs, ys)
                ci, ri = np.floor(cols).astype(int), np.floor(rws).astype(int)
                inside = (ci >= 0) & (ci < nx) & (ri >= 0) & (ri < ny)
                if c.check(bool(inside.all()), "paths.tif: every node of paths.csv falls on a pixel",
                           f"{int((~inside).sum())} nodes outside the raster"):
                    got_v = bands[:, ri, ci].T
                    eq = got_v == vals
                    detail = ""
                    if not eq.all():
                        k = int(np.argmax(~eq.all(axis=1)))
                        flipped = bands[:, ny - 1 - ri, ci].T
                        detail = (f"{int((~eq).sum())} of {eq.size} values differ, max |diff| "
                                  f"{np.nanmax(np.abs(got_v - vals)):.3g}; first at ({xs[k]}, {ys[k]}): tif "
                                  f"{got_v[k].tolist()} vs csv {vals[k].tolist()}")
                        if (flipped == vals).all():
                            detail += " — they all match with the rows flipped: the raster is south-up"
                    c.check(bool(eq.all()), f"paths.tif: all {eq.size} values equal paths.csv exactly, located by "
                                            "coordinate", detail)
                # Explicit spot checks with GDAL's own coordinate lookup.
                spots = {"SW corner": (xlo, ylo), "NW corner": (xlo, yhi), "NE corner": (xhi, yhi),
                         "SE corner": (xhi, ylo), "centre node": (xlo + (nx // 2) * dx, ylo + (ny // 2) * dy)}
                lines, ok = [], True
                for name, (x, y) in spots.items():
                    k = int(np.argmin(np.abs(xs - x) + np.abs(ys - y)))
                    v = np.array(next(tif.sample([(xs[k], ys[k])])), dtype=np.float64)
                    ok &= bool((v == vals[k]).all())
                    lines.append(f"{name} ({xs[k]:.6g}, {ys[k]:.6g}): GDAL {v.tolist()} csv {vals[k].tolist()}")
                c.check(ok, "paths.tif: corners and centre read by coordinate (GDAL sample) equal paths.csv",
                        "; ".join(lines))
                def grid_row(y: float) -> np.ndarray:
                    r = rows[np.abs(ys - y) <= 1e-9 * dy]
                    return r[np.argsort(r[:, 0])][:, 2:]

                row0 = bands[:, 0, :].T
                north, south = grid_row(yhi), grid_row(ylo)
                c.check(north.shape == row0.shape and bool((row0 == north).all()),
                        f"paths.tif: north-up — raster row 0 holds the northernmost grid row (y = {yhi:g})",
                        "row 0 differs from paths.csv's nodes at y_max"
                        + (" and equals those at y_min: south-up" if south.shape == row0.shape
                           and bool((row0 == south).all()) else ""))
            else:
                c.check(False, "paths.tif: band values", f"raster shape {bands.shape}, csv shape {rows.shape}")

    # ---- the data's bounding box in WGS 84 -------------------------------------------------
    if a.data is not None:
        xcol, ycol = a.x.split(",")
        with open(a.data, newline="") as f:
            recs = list(csv.DictReader(f))
        dxs = np.array([float(r[xcol]) for r in recs])
        dys = np.array([float(r[ycol]) for r in recs])
        data_crs = f"EPSG:{a.data_crs or code}"
        data_rect = (float(dxs.min()), float(dys.min()), float(dxs.max()), float(dys.max()))
    else:
        data_rect = tuple(float(v) for v in a.bbox.split(","))
        data_crs = crs_s
    region = to_wgs84_polygon(data_crs, data_rect).union(to_wgs84_polygon(crs_s, (xlo, ylo, xhi, yhi)))
    print(f"     data bbox {data_rect} ({data_crs}) and grid box ({xlo}, {ylo}, {xhi}, {yhi}) ({crs_s}) in WGS 84: "
          f"lon/lat bounds {tuple(round(b, 7) for b in region.bounds)}")

    # ---- excursion.geojson -----------------------------------------------------------------
    gj_path = out / "excursion.geojson"
    gj = json.loads(gj_path.read_text())
    c.check("crs" not in gj, "excursion.geojson: no 'crs' member (RFC 7946)", f"crs = {gj.get('crs')}")
    try:
        info = pyogrio.read_info(gj_path)
        _, _, wkb, _ = pyogrio.raw.read(gj_path)
        g_gdal = shapely.from_wkb(wkb)
    except Exception as e:  # noqa: BLE001
        c.check(False, "excursion.geojson: GDAL (OGR GeoJSON driver) reads it", repr(e))
        return finish(c)
    c.check(info["driver"] == "GeoJSON" and str(info["crs"]) in ("EPSG:4326", "OGC:CRS84"),
            "excursion.geojson: GDAL reads it as GeoJSON in WGS 84", f"driver {info['driver']}, crs {info['crs']}")
    g_json = [shape(f["geometry"]) if f.get("geometry") else None for f in gj["features"]]
    c.check(len(g_gdal) >= 1 and len(g_gdal) == len(g_json), "excursion.geojson: GDAL and shapely see the same "
            f"features, at least one", f"GDAL {len(g_gdal)}, JSON {len(g_json)}")
    geoms = [g for g in g_json if g is not None]
    problems = []
    for k, (gg, gs) in enumerate(zip(g_gdal, g_json)):
        if gs is None or gg is None:
            problems.append(f"feature {k}: no geometry")
            continue
        if gs.geom_type not in ("Polygon", "MultiPolygon"):
            problems.append(f"feature {k}: {gs.geom_type}")
        if gs.is_empty or not gs.area > 0:
            problems.append(f"feature {k}: empty or zero area")
        if not gs.is_valid:
            problems.append(f"feature {k}: invalid ({shapely.is_valid_reason(gs)})")
        if not gg.equals_exact(gs, 0.0):
            problems.append(f"feature {k}: GDAL's geometry differs from shapely's")
    c.check(not problems and bool(geoms), "excursion.geojson: every feature a valid, non-empty Polygon/MultiPolygon "
            f"(GEOS), GDAL's = shapely's ({sum(len(getattr(g, 'geoms', [g])) for g in geoms)} polygons)",
            "; ".join(problems))
    polys = [p for g in geoms for p in getattr(g, "geoms", [g])]
    orient = [f"polygon {k}: exterior clockwise" for k, p in enumerate(polys) if not p.exterior.is_ccw]
    orient += [f"polygon {k}: a hole counter-clockwise" for k, p in enumerate(polys) for r in p.interiors if r.is_ccw]
    c.check(not orient, "excursion.geojson: rings follow RFC 7946's right-hand rule", "; ".join(orient[:5]))
    if geoms:
        coords = np.concatenate([shapely.get_coordinates(g) for g in geoms])
        lon_ok = bool((np.abs(coords[:, 0]) <= 180).all() and (np.abs(coords[:, 1]) <= 90).all())
        c.check(lon_ok, "excursion.geojson: every vertex is lon/lat (|lon| <= 180, |lat| <= 90)",
                f"coordinates span {coords.min(axis=0).tolist()} .. {coords.max(axis=0).tolist()} — not degrees")
        # The remaining checks on a repaired copy when a geometry is invalid (already failed above).
        allg = shapely.union_all([g if g.is_valid else shapely.make_valid(g) for g in geoms])
        (w0, s0, e0, n0), (w1, s1, e1, n1) = region.bounds, allg.bounds
        in_box = w1 >= w0 - TOL_DEG and s1 >= s0 - TOL_DEG and e1 <= e0 + TOL_DEG and n1 <= n0 + TOL_DEG
        c.check(in_box, "excursion.geojson: inside the bounding box of the data and the grid in WGS 84 (tolerance 1e-7 deg)",
                f"geometry bounds {allg.bounds}, box {region.bounds}")
        c.check(region.buffer(TOL_DEG).covers(allg),
                "excursion.geojson: inside the data's and the grid's boxes as lon/lat quadrilaterals (tolerance 1e-7 deg)",
                f"{allg.difference(region.buffer(TOL_DEG)).area:.3g} deg² outside")
        if rows.shape[1] >= 3 and lon_ok:
            lon, lat = warp_transform(crs_s, WGS84, xs, ys)
            pts = shapely.points(np.asarray(lon), np.asarray(lat))
            far = shapely.distance(allg.boundary, pts) > TOL_DEG
            inside = shapely.covers(allg, pts)
            above = vals[:, 0] >= threshold
            wrong = far & (inside != above)
            c.check(int(far.sum()) > 0 and not wrong.any(),
                    f"excursion.geojson: it is {{path_1 >= {threshold:g}}} at all {int(far.sum())} grid nodes off its "
                    "boundary", f"{int(wrong.sum())} nodes on the wrong side, e.g. "
                    + ", ".join(f"({xs[k]:.6g}, {ys[k]:.6g}) path_1 = {vals[k, 0]:.4g}"
                                for k in np.flatnonzero(wrong)[:3]))

    # ---- paths.qml and paths.sld: the GeoTIFF's styles; no georeferenced figure ------------
    for f in ("map.pgw", "map.prj", "map.png.aux.xml"):
        c.check(not (out / f).exists(), f"{f}: absent (a decorated figure is not georeferenced)",
                f"{f} georeferences map.png, whose title and colour bar would land on the ground")
    c.check({"paths.qml", "paths.sld"} <= set(outputs), "report.json: paths.qml and paths.sld are among the outputs",
            f"outputs {outputs}")
    ramps = {}
    for name, tag, value_attr in (("paths.qml", "item", "value"), ("paths.sld", "ColorMapEntry", "quantity")):
        try:
            root = ET.parse(out / name).getroot()
            ns = "{http://www.opengis.net/sld}" if name.endswith(".sld") else ""
            entries = [(float(e.get(value_attr)), e.get("color")) for e in root.iter(ns + tag)]
            ramps[name] = entries
            values = [v for v, _ in entries]
            c.check(len(entries) >= 2 and values == sorted(values) and values[0] < values[-1],
                    f"{name}: a colour ramp of {len(entries)} ascending values", f"{entries}")
        except Exception as e:  # noqa: BLE001
            c.check(False, f"{name}: parses as XML with a colour ramp", repr(e))
    if "paths.qml" in ramps:
        root = ET.parse(out / "paths.qml").getroot()
        r = root.find("./pipe/rasterrenderer")
        c.check(r is not None and r.get("type") == "singlebandpseudocolor" and r.get("band") == "1",
                "paths.qml: QGIS's single-band pseudocolour renderer of band 1",
                f"{None if r is None else r.attrib}")
        if ramps.get("paths.sld"):
            c.check([(v, col.lower()) for v, col in ramps["paths.qml"]] == [(v, col.lower()) for v, col in ramps["paths.sld"]],
                    "paths.qml and paths.sld: the same ramp", "they differ")
        # The ramp, interpolated as QGIS does, colours path_1 red above the threshold and blue below
        # (the figures' diverging palette centred on it).
        values = np.array([v for v, _ in ramps["paths.qml"]])
        cols = np.array([[int(col[k:k + 2], 16) for k in (1, 3, 5)] for _, col in ramps["paths.qml"]], dtype=float)
        v1 = vals[:, 0]
        rgb = np.stack([np.interp(v1, values, cols[:, k]) for k in range(3)], axis=1)
        sel = np.abs(v1 - threshold) > 0.05 * np.abs(v1 - threshold).max()
        agree = np.where(v1 > threshold, rgb[:, 0] > rgb[:, 2], rgb[:, 2] > rgb[:, 0])[sel]
        c.check(sel.sum() > 0 and agree.all(),
                f"paths.qml: its ramp shows path_1 red above t = {threshold:g} and blue below "
                f"({agree.mean():.1%} of {int(sel.sum())} nodes)", "the style is not centred on the threshold")
    return finish(c)


def finish(c: Checks) -> int:
    if c.failed:
        print(f"check_gis: {len(c.failed)} of {c.passed + len(c.failed)} checks FAILED:", file=sys.stderr)
        for m in c.failed:
            print(f"  - {m}", file=sys.stderr)
        return 1
    print(f"check_gis: all {c.passed} checks OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - any crash is a failed check, with its traceback
        import traceback

        traceback.print_exc()
        print(f"check_gis: FAILED with {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
