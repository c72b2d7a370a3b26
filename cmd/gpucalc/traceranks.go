package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

// rankFiles reads the arguments of 'trace': one file (or -) is one trace;
// several files, or a folder of .json and .json.gz files, are one trace
// per rank (several is then true).
func rankFiles(argv []string) (files []string, several bool, err error) {
	if len(argv) == 1 {
		st, err := os.Stat(argv[0])
		if argv[0] == "-" || err != nil || !st.IsDir() {
			return argv, false, nil // Open says what is wrong with a file
		}
		dir := argv[0]
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, false, fmt.Errorf("reading the folder %s: %w", dir, err)
		}
		var stats []os.FileInfo
		for _, e := range entries {
			n := strings.ToLower(e.Name())
			if !strings.HasSuffix(n, ".json") && !strings.HasSuffix(n, ".json.gz") {
				continue
			}
			// A link to a trace is a trace (os.Stat follows it).
			path := filepath.Join(dir, e.Name())
			if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
				if err := sameFile(files, stats, path, st); err != nil {
					return nil, false, err
				}
				files, stats = append(files, path), append(stats, st)
			}
		}
		if len(files) == 0 {
			return nil, false, fmt.Errorf("%s holds no .json or .json.gz files: give a folder of torch.profiler traces, one per rank", dir)
		}
		return files, true, nil
	}
	var stats []os.FileInfo
	seen := map[string]bool{}
	for i, a := range argv {
		if a == "-" {
			return nil, false, usagef("- (standard input) is one trace; give the ranks' traces as files or a folder")
		}
		st, err := os.Stat(a)
		if err == nil && st.IsDir() {
			return nil, false, usagef("%s is a folder: give one folder, or several trace files", a)
		}
		if seen[filepath.Clean(a)] {
			return nil, false, usagef("%s is given twice: give one trace per rank", a)
		}
		seen[filepath.Clean(a)] = true
		if err == nil {
			if err := sameFile(argv[:i], stats[:i], a, st); err != nil {
				return nil, false, usageError{err}
			}
		}
		stats = append(stats, st) // nil for a file Open will say is missing
	}
	return argv, true, nil
}

// sameFile is the error of path when it is a file of files (stats[i] of
// files[i]) under another name, a link or a second path: one trace read
// twice would be two ranks.
func sameFile(files []string, stats []os.FileInfo, path string, st os.FileInfo) error {
	for i, o := range stats {
		if o != nil && os.SameFile(o, st) {
			return fmt.Errorf("%s and %s are the same file: give one trace per rank", files[i], path)
		}
	}
	return nil
}

// traceRanksRun analyses one trace per rank: each rank's compute,
// communication, overlap and idle time, the collectives against the
// device's link, the slowest rank and the findings.
func traceRanksRun(opts *traceOptions, form reports.Format, files []string) error {
	f := opts.f
	if opts.onGiven() {
		return usagef("--on projects one trace: give one rank's file to project it")
	}
	if opts.chart.file != "" {
		return usagef("--plot draws one trace's ops: give one rank's file to draw it")
	}
	rts := make([]trace.RankTrace, 0, len(files))
	for _, file := range files {
		tr, name, err := readTrace(f, file)
		// Shapes price ops; the ranks' times need none.
		if err != nil && !errors.Is(err, trace.ErrNoShapes) {
			return err
		}
		rts = append(rts, trace.RankTrace{Name: name, Trace: tr})
	}
	// The device comes from the first trace that names one.
	first := rts[0].Trace
	if i := slices.IndexFunc(rts, func(rt trace.RankTrace) bool { return rt.Trace.DeviceName() != "" }); i >= 0 {
		first = rts[i].Trace
	}
	d, origin, err := traceDevice(opts, first)
	if err != nil {
		return err
	}
	m, err := roofline.New(d)
	if err != nil {
		return err
	}
	rs, err := trace.AnalyzeRanks(rts, m)
	if err != nil {
		return err
	}
	return f.Output(form, &opts.section, nil, reports.TraceRanksView{DeviceOrigin: origin, Ranks: rs},
		func() []reports.Table { return reports.TraceRanks(rs, origin, opts.top) },
		func() []reports.Table { return reports.TraceRanksRecords(rs) })
}
