#!/usr/bin/env python3
"""Write small synthetic fixtures in the formats of the real-data study.

Outputs (relative to the repository root), all synthetic:

    crates/gpdp-experiments/tests/data/realdata/pp-2017-sample.csv
    crates/gpdp-experiments/tests/data/realdata/pp-2018-sample.csv
    crates/gpdp-experiments/tests/data/realdata/pp-malformed.csv
    crates/gpdp-experiments/tests/data/realdata/postcodes-sample.csv
    crates/gpdp-experiments/tests/data/realdata/expected-counts.csv

Formats:

* pp-*.csv imitate HM Land Registry "Price Paid Data": no header, 16 fields,
  every field double-quoted: transaction id, price, date of transfer
  ("YYYY-MM-DD HH:MM"), postcode, property type (D/S/T/F/O), old/new (Y/N),
  duration (F/L/U), PAON, SAON, street, locality, town/city, district,
  county, PPD category type (A/B), record status (A/C/D). pp-2018 uses CRLF
  line ends (pp-2017 LF), and some address fields contain commas.
* postcodes-sample.csv imitates an ONS Postcode Directory extract: a header
  row (pcd, pcd2, pcds, ..., oseast1m, osnrth1m, osgrdind, ..., lat, long),
  quoted text fields. Postcodes without a grid reference have empty
  oseast1m/osnrth1m (and lat 99.999999), some postcodes appear twice with
  different coordinates (the first row is the one to keep), and some rows
  are postcodes no transaction uses.
* expected-counts.csv (key,value) holds the counts a correct reader must
  report, computed here from the generating choices, not by re-reading.

Content: synthetic postcodes "ZZ<d> <s><uu>" (London) and "YY<d> <s><uu>"
(elsewhere) at British National Grid coordinates inside an ellipse around
central London (easting 503-561 km, northing 155-201 km). Prices follow a
smooth log-price surface

    log p = 12.85 + 0.6 exp(-|x - c1|^2 / (2 * 9 km^2))
                  + 0.3 exp(-|x - c2|^2 / (2 * 3.5 km^2))
                  + 0.1 (northing - 178 km) / 23 km + N(0, 0.2^2),

c1 = (530.5, 180.5) km, c2 = (519, 166) km, so that {median log p > 13} is a
central region (about a third of the
hexagons) plus a small island. Each year has 600 rows: about 55% pass
every default filter (Greater London, category A, status A, flat, existing,
leasehold, the file's year, price > 0, postcode present); every other row
fails exactly one filter, so the expected rejection counts are unambiguous.
Of the passing rows about 5% use postcodes missing from the lookup and 3%
postcodes whose lookup row has no coordinates (both unmatched in the join).

Deterministic: Python's random.Random(SEED) drives every choice. Re-run
from the repository root with any Python 3 (standard library only):

    python3 scripts/make_realdata_fixtures.py
"""

import csv
import io
import math
import os
import random

SEED = 20260610
OUT = os.path.join("crates", "gpdp-experiments", "tests", "data", "realdata")
ROWS_PER_YEAR = 600
UNIT_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"
REASONS = [
    "year", "county", "category", "record_status", "property_type",
    "old_new", "duration", "price", "postcode",
]
BOROUGHS = ["CAMDEN", "HACKNEY", "ISLINGTON", "LAMBETH", "SOUTHWARK", "WANDSWORTH",
            "CITY OF WESTMINSTER", "TOWER HAMLETS", "EALING", "BARNET"]
STREETS = ["HIGH STREET", "CHURCH ROAD", "STATION ROAD", "PARK AVENUE", "VICTORIA ROAD",
           "MILL LANE", "THE GROVE", "KINGS ROAD"]
ELSEWHERE = [("SURREY", "GUILDFORD", "GUILDFORD"), ("KENT", "SEVENOAKS", "SEVENOAKS"),
             ("ESSEX", "CHELMSFORD", "CHELMSFORD"), ("HERTFORDSHIRE", "WATFORD", "WATFORD")]


def postcode(rng, area, used):
    while True:
        pc = "%s%d %d%s%s" % (area, rng.randint(1, 20), rng.randint(0, 9),
                               rng.choice(UNIT_LETTERS), rng.choice(UNIT_LETTERS))
        if pc not in used:
            used.add(pc)
            return pc


def london_point(rng):
    # Uniform in the ellipse centred at (532, 178) km with semi-axes 29 x 23 km.
    while True:
        u, v = rng.uniform(-1, 1), rng.uniform(-1, 1)
        if u * u + v * v <= 1:
            return 532000 + 29000 * u, 178000 + 23000 * v


def log_price(rng, e, n):
    d1 = ((e - 530500) ** 2 + (n - 180500) ** 2) / (2 * 9000.0 ** 2)
    d2 = ((e - 519000) ** 2 + (n - 166000) ** 2) / (2 * 3500.0 ** 2)
    return (12.85 + 0.6 * math.exp(-d1) + 0.3 * math.exp(-d2)
            + 0.1 * (n - 178000) / 23000 + rng.gauss(0, 0.2))


def pcd_forms(pcds):
    out, inw = pcds.split(" ")
    return (out.ljust(4) + inw)[:7] if len(out) < 4 else out + inw, out.ljust(5) + inw


def guid(rng):
    h = "%032X" % rng.getrandbits(128)
    return "{%s-%s-%s-%s-%s}" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def write_csv(path, rows, header=None, crlf=False, quote_all=True):
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL,
                   lineterminator="\r\n" if crlf else "\n")
    if header:
        # ONSPD headers are not quoted.
        buf.write(",".join(header) + ("\r\n" if crlf else "\n"))
    for r in rows:
        w.writerow(r)
    with open(path, "w", newline="", encoding="ascii") as f:
        f.write(buf.getvalue())


def main():
    rng = random.Random(SEED)
    used = set()
    london = [postcode(rng, "ZZ", used) for _ in range(250)]
    coords = {pc: london_point(rng) for pc in london}
    orphans = [postcode(rng, "ZZ", used) for _ in range(15)]      # not in the lookup
    no_coords = [postcode(rng, "ZZ", used) for _ in range(10)]    # lookup row without coordinates
    elsewhere = [postcode(rng, "YY", used) for _ in range(40)]
    unused = [postcode(rng, "ZZ", used) for _ in range(50)]        # in the lookup, never sold
    for pc in elsewhere:
        coords[pc] = (rng.uniform(460000, 620000), rng.uniform(120000, 240000))
    for pc in unused:
        coords[pc] = london_point(rng)

    expected = []
    for year, crlf in [(2017, False), (2018, True)]:
        rows = []
        kept = unmatched = 0
        rejected = {r: 0 for r in REASONS}
        for _ in range(ROWS_PER_YEAR):
            u = rng.random()
            if u < 0.92:
                pc = rng.choice(london)
            elif u < 0.97:
                pc = rng.choice(orphans)
            else:
                pc = rng.choice(no_coords)
            e, n = coords.get(pc, london_point(rng))
            price = int(round(math.exp(log_price(rng, e, n)), -2))
            date = "%d-%02d-%02d 00:00" % (year, rng.randint(1, 12), rng.randint(1, 28))
            style = rng.random()
            pc_text = pc if style < 0.8 else (pc.lower() if style < 0.9 else pc.replace(" ", ""))
            paon = str(rng.randint(1, 200))
            saon = "FLAT %d" % rng.randint(1, 40)
            street = rng.choice(STREETS)
            if rng.random() < 0.1:
                paon = "%s, %s" % (paon, "THE COURT")  # a comma inside a quoted field
            borough = rng.choice(BOROUGHS)
            f = {"ptype": "F", "new": "N", "dur": "L", "county": "GREATER LONDON", "town": "LONDON",
                 "district": borough, "cat": "A", "status": "A"}
            reason = None if rng.random() < 0.55 else rng.choice(REASONS)
            if reason == "year":
                date = "%d-%02d-%02d 00:00" % (year - 1 if year == 2017 else year + 1, rng.randint(1, 12),
                                               rng.randint(1, 28))
            elif reason == "county":
                f["county"], f["town"], f["district"] = rng.choice(ELSEWHERE)
                pc = rng.choice(elsewhere)
                pc_text = pc
            elif reason == "category":
                f["cat"] = "B"
            elif reason == "record_status":
                f["status"] = rng.choice("CD")
            elif reason == "property_type":
                f["ptype"] = rng.choice("DSTO")
                saon = ""
            elif reason == "old_new":
                f["new"] = "Y"
            elif reason == "duration":
                f["dur"] = rng.choice("FFFU")
            elif reason == "price":
                price = 0
            elif reason == "postcode":
                pc_text = ""
            if reason is None:
                kept += 1
                if pc in orphans or pc in no_coords:
                    unmatched += 1
            else:
                rejected[reason] += 1
            rows.append([guid(rng), str(price), date, pc_text, f["ptype"], f["new"], f["dur"], paon, saon,
                         street, "", f["town"], f["district"], f["county"], f["cat"], f["status"]])
        write_csv(os.path.join(OUT, "pp-%d-sample.csv" % year), rows, crlf=crlf)
        tag = "ppd_%d" % year
        expected += [(tag + "_rows", ROWS_PER_YEAR), (tag + "_kept", kept), (tag + "_malformed", 0)]
        expected += [(tag + "_rejected_" + r, rejected[r]) for r in REASONS]
        expected += [(tag + "_join_matched", kept - unmatched), (tag + "_join_unmatched", unmatched)]

    # Malformed lines (1-based): 3 has 15 fields, 5 a non-numeric price, 6 a bad date.
    good = ["{00000000-0000-0000-0000-000000000001}", "450000", "2017-05-02 00:00", london[0], "F", "N",
            "L", "1", "FLAT 1", "HIGH STREET", "", "LONDON", "CAMDEN", "GREATER LONDON", "A", "A"]
    bad_fields = good[:15]
    bad_price = good[:1] + ["12k"] + good[2:]
    bad_date = good[:2] + ["02/05/2017 00:00"] + good[3:]
    write_csv(os.path.join(OUT, "pp-malformed.csv"), [good, good, bad_fields, good, bad_price, bad_date, good])
    expected += [("malformed_rows", 7), ("malformed_kept", 4), ("malformed_malformed", 3),
                 ("malformed_first_line", 3)]

    header = ["pcd", "pcd2", "pcds", "dointr", "doterm", "oscty", "oslaua", "osward", "usertype",
              "oseast1m", "osnrth1m", "osgrdind", "ctry", "rgn", "lat", "long"]
    lookup = []
    def row(pc, e, n, region):
        pcd, pcd2 = pcd_forms(pc)
        if e is None:
            return [pcd, pcd2, pc, "198001", "", "E99999999", "E09000007", "E05000000", "0",
                    "", "", "9", "E92000001", region, "99.999999", "0.000000"]
        lat = 51.5 + (n - 180000) / 111000.0
        lon = -0.12 + (e - 530000) / 69500.0
        return [pcd, pcd2, pc, "198001", "", "E99999999", "E09000007", "E05000000", "0",
                "%d" % round(e), "%d" % round(n), "1", "E92000001", region, "%.6f" % lat, "%.6f" % lon]
    for pc in london + unused:
        e, n = coords[pc]
        lookup.append(row(pc, e, n, "E12000007"))
    for pc in elsewhere:
        e, n = coords[pc]
        lookup.append(row(pc, e, n, "E12000008"))
    for pc in no_coords:
        lookup.append(row(pc, None, None, "E12000007"))
    rng.shuffle(lookup)
    dups = london[:5]
    for pc in dups:  # later duplicates with other coordinates: the first row wins
        lookup.append(row(pc, 500000.0, 150000.0, "E12000007"))
    # Rows as in ONSPD: numbers unquoted, text quoted.
    buf = io.StringIO()
    buf.write(",".join(header) + "\n")
    for r in lookup:
        buf.write(",".join(v if k in (9, 10, 11, 14, 15) else '"%s"' % v for k, v in enumerate(r)) + "\n")
    with open(os.path.join(OUT, "postcodes-sample.csv"), "w", newline="", encoding="ascii") as f:
        f.write(buf.getvalue())
    with_coords = len(london) + len(unused) + len(elsewhere)
    expected += [("lookup_rows", len(lookup)), ("lookup_kept", with_coords),
                 ("lookup_without_coordinates", len(no_coords)), ("lookup_duplicates", len(dups))]
    e, n = coords[dups[0]]
    expected += [("lookup_first_duplicate_easting", round(e)), ("lookup_first_duplicate_northing", round(n))]
    expected += [("lookup_first_duplicate_postcode", dups[0])]

    with open(os.path.join(OUT, "expected-counts.csv"), "w", newline="", encoding="ascii") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["key", "value"])
        for k, v in expected:
            w.writerow([k, v])


if __name__ == "__main__":
    main()
