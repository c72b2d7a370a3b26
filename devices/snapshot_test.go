package devices

import (
	"flag"
	"os"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite snapshot.gob from the YAML files")

// TestSnapshot checks that the embedded snapshot is what the YAML files give,
// device by device and architecture by architecture.
func TestSnapshot(t *testing.T) {
	want, err := encodeSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("snapshot.gob", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := decodeSnapshot(snapshotGob)
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalogFromYAML()
	if err != nil {
		t.Fatal(err)
	}
	m, err := archsFromYAML()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.catalog.devices, c.devices) || !reflect.DeepEqual(got.catalog.index, c.index) || !reflect.DeepEqual(got.archs, m) {
		t.Fatal("snapshot.gob is stale: run go test ./devices -run TestSnapshot -update")
	}
}
