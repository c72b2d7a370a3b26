package main

import (
	"runtime/debug"
	"testing"
)

// TestBuildVersion reads what go build records in a clone (a pseudo-version
// naming the commit, and the vcs settings) and what go install
// MODULE@VERSION records (a tag, no vcs settings).
func TestBuildVersion(t *testing.T) {
	clone := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/gpucalc/gpucalc", Version: "v0.0.0-20261122212337-c87a51cbc6fe+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "c87a51cbc6fe73d26f78e20c9118a35e300f8033"},
			{Key: "vcs.time", Value: "2026-11-22T21:23:37Z"}, {Key: "vcs.modified", Value: "true"}}}
	tagged := &debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Path: "github.com/gpucalc/gpucalc", Version: "v1.2.0"}}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{clone, true, "v0.0.0-20261122212337-c87a51cbc6fe+dirty (revision c87a51cbc6fe73d26f78e20c9118a35e300f8033, 2026-11-22T21:23:37Z, modified) go1.26.8"},
		{tagged, true, "v1.2.0 go1.25.0"},
		{&debug.BuildInfo{GoVersion: "go1.25.0"}, true, "(devel) go1.25.0"},
	} {
		if got := buildVersion(tc.bi, tc.ok).String(); got != tc.want {
			t.Errorf("buildVersion(%s) = %q, want %q", tc.bi.Main.Version, got, tc.want)
		}
	}
	if v := buildVersion(nil, false); v.Module != "(devel)" || v.Go == "" {
		t.Errorf("no build info: %+v, want (devel) and the running Go version", v)
	}
}
