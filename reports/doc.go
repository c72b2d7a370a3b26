// Package reports renders the results that the domain packages answer:
// tables (through one table writer, Render, the only user of tablewriter),
// Markdown, CSV records, JSON views, the review's HTML page, and the views
// that the chart package draws. It computes nothing: every figure it prints
// is in the result it is handed.
//
// The files go by result: each result's table, CSV records and JSON view
// sit together (occupancy.go, roofline.go, ncu.go, trace.go, ...); cells.go
// formats single cells, table.go and fit.go render and fit tables.
//
// The record sets are what --format csv writes, one Table per section,
// keyed by the section's name. Every header is snake_case; every cell one
// plain value: numbers in base units (bytes, seconds, hertz, FLOP/s, bytes
// per second) with the unit in the column's name, fractions as 0..1, an
// empty cell where there is no value. docs/output.md states the
// conventions.
//
// The JSON views are what each command's --format json writes, one named
// type per command, so the keys are stable and documented in one place.
// Keys are snake_case; numbers are plain, in base units named in the key.
package reports
