package devices

import (
	"bytes"
	_ "embed"
	"encoding/gob"
	"fmt"
	"sync"
)

// The embedded catalog and architecture limits are read at start-up from a
// gob snapshot of the YAML files under data/ rather than from the YAML
// itself: parsing twenty YAML files costs about 5 ms of every command's
// start, decoding the snapshot about 0.5 ms. The YAML stays the one source;
// TestSnapshot fails when the snapshot differs from what the YAML gives, and
// `go test ./devices -run TestSnapshot -update` rewrites it.
//
//go:embed snapshot.gob
var snapshotGob []byte

// snapshotFile is what snapshot.gob holds.
type snapshotFile struct {
	Devices []Device
	Archs   []Arch
}

// snapshot is the decoded snapshot.
type snapshot struct {
	catalog *Catalog
	archs   map[CC]Arch
}

var embedded = sync.OnceValues(func() (snapshot, error) {
	return decodeSnapshot(snapshotGob)
})

func decodeSnapshot(b []byte) (snapshot, error) {
	var f snapshotFile
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&f); err != nil {
		return snapshot{}, fmt.Errorf("devices: the embedded catalog snapshot does not decode (%v); run go test ./devices -run TestSnapshot -update", err)
	}
	c := &Catalog{devices: f.Devices, index: map[string]int{}}
	for i, d := range f.Devices {
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			c.index[normalize(n)] = i
		}
	}
	m := make(map[CC]Arch, len(f.Archs))
	for _, a := range f.Archs {
		m[a.CC] = a
	}
	return snapshot{c, m}, nil
}

// encodeSnapshot reads the YAML files and encodes what they give.
func encodeSnapshot() ([]byte, error) {
	m, err := archsFromYAML()
	if err != nil {
		return nil, err
	}
	c, err := catalogFromYAML()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = gob.NewEncoder(&buf).Encode(snapshotFile{Devices: c.devices, Archs: sortedArchs(m)})
	return buf.Bytes(), err
}
