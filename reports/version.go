package reports

import "strconv"

// Version is 'gpucalc version': what the binary was built from.
type Version struct {
	// Module is the main module's version: a release tag (v1.2.0) for
	// `go install MODULE@VERSION`, a pseudo-version from the clone's commit
	// for a build in a clone (Go 1.24 on), "(devel)" when Go recorded none.
	Module string `json:"version"`
	// Revision, Time and Modified are the VCS commit the binary was built
	// from, its time, and whether the tree had uncommitted changes; empty
	// when the build recorded no VCS (go install MODULE@VERSION does not).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"revision_time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go_version"`
}

// String is the one line --version prints.
func (v Version) String() string {
	s := v.Module
	if v.Revision != "" {
		s += " (revision " + v.Revision
		if v.Time != "" {
			s += ", " + v.Time
		}
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.Go
}

// VersionTables is the table of 'gpucalc version'.
func VersionTables(v Version) []Table {
	t := Table{Title: "gpucalc " + v.Module, Header: []string{"Item", "Value"}}
	add := func(k, val string) {
		if val == "" {
			val = "-"
		}
		t.Rows = append(t.Rows, []string{k, val})
	}
	add("version", v.Module)
	add("revision", v.Revision)
	add("revision time", v.Time)
	add("modified", strconv.FormatBool(v.Modified))
	add("go", v.Go)
	if v.Revision == "" {
		t.Notes = []string{"No VCS revision recorded: built outside a clone, or with -buildvcs=false."}
	}
	return []Table{t}
}

// VersionRecords is the CSV of 'gpucalc version': one row.
func VersionRecords(v Version) []Table {
	return []Table{{Key: "version", Header: []string{"version", "revision", "revision_time", "modified", "go_version"},
		Rows: [][]string{{v.Module, v.Revision, v.Time, boolean(v.Modified), v.Go}}}}
}
