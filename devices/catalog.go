package devices

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/gpucalc/gpucalc/names"
)

//go:embed data
var dataFS embed.FS

// Catalog is a set of devices, looked up by name or alias. A Catalog is never
// modified: With returns a new one.
type Catalog struct {
	devices []Device
	index   map[string]int // normalised name or alias → devices index
}

// builtin is the embedded catalog, from the snapshot.
var builtin = sync.OnceValues(func() (*Catalog, error) {
	s, err := embedded()
	if err != nil {
		return nil, err
	}
	return s.catalog, nil
})

// catalogFromYAML reads the catalog's YAML files.
func catalogFromYAML() (*Catalog, error) {
	c := &Catalog{index: map[string]int{}}
	// Datasheet entries first, then the ceilings measured on real parts
	// (tools/measure), which override the entries they name.
	for _, dir := range []string{"gpus", "measured"} {
		files, err := fs.Glob(dataFS, "data/"+dir+"/*.yaml")
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := dataFS.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if c, err = c.with("builtin:"+dir+"/"+path.Base(f), data, dir == "measured"); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// Builtin returns the embedded catalog.
func Builtin() (*Catalog, error) { return builtin() }

// Lookup finds a device of the embedded catalog; see Catalog.Lookup.
func Lookup(name string) (Device, error) {
	c, err := Builtin()
	if err != nil {
		return Device{}, err
	}
	return c.Lookup(name)
}

// With returns a catalog with the device file data (named file in errors)
// applied: a file whose name matches a device of c overrides the fields it
// gives; any other adds a device, which must then be complete. Every figure
// must lie in its physical range; a measured figure may not exceed the
// ceiling it was measured against, and a file that changes a ceiling drops
// the figures measured against the old one unless it restates them, so that
// expected times never fall below datasheet lower bounds.
func (c *Catalog) With(file string, data []byte) (*Catalog, error) {
	return c.with(file, data, true)
}

func (c *Catalog) with(file string, data []byte, mayOverride bool) (*Catalog, error) {
	f, root, err := decodeFile(file, data)
	if err != nil {
		return nil, err
	}
	l := &loader{file: file, root: root, lines: map[string]int{}}
	nameLine := root.Line
	if !f.Name.given() {
		return nil, l.errorf(nameLine, "missing name; a device file names the device it adds or overrides")
	}
	name, err := l.text("name", f.Name)
	if err != nil {
		return nil, err
	}
	nameLine = f.Name.n.Line
	out := &Catalog{devices: append([]Device(nil), c.devices...), index: make(map[string]int, len(c.index))}
	for k, v := range c.index {
		out.index[k] = v
	}
	var d Device
	i, exists := c.index[normalize(name)]
	if exists {
		if !mayOverride {
			return nil, l.errorf(nameLine, "device %q is defined twice", name)
		}
		d = c.devices[i].clone()
	} else {
		d.Name = name
		i = len(out.devices)
		out.devices = append(out.devices, Device{})
	}
	d.Origin = append(d.Origin, file)
	if d.Sources == nil {
		d.Sources = map[string]string{}
	}
	l.d = &d
	if err := l.apply(f); err != nil {
		return nil, err
	}
	dropStale(&d, f)
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("%s:%d: device %q: %w", file, l.line(err, nameLine), d.Name, err)
	}
	out.devices[i] = d
	for _, n := range append([]string{d.Name}, d.Aliases...) {
		k := normalize(n)
		if j, ok := out.index[k]; ok && j != i {
			line := nameLine
			if al, ok := l.lines["aliases"]; ok && n != d.Name {
				line = al
			}
			return nil, fmt.Errorf("%s:%d: name %q of %q is already used by %q; choose another", file, line, n, d.Name, out.devices[j].Name)
		}
		out.index[k] = i
	}
	return out, nil
}

// clone returns a deep copy: nothing of it shares memory with d.
func (d Device) clone() Device {
	e := d
	e.Aliases = slices.Clone(d.Aliases)
	e.Origin = slices.Clone(d.Origin)
	e.ClusterGPCs = slices.Clone(d.ClusterGPCs)
	e.Dense, e.Sparse, e.Sources = clone(d.Dense), clone(d.Sparse), clone(d.Sources)
	if d.Measured != nil {
		m := *d.Measured
		m.Peaks, m.LatencyCycles = clone(m.Peaks), clone(m.LatencyCycles)
		e.Measured = &m
	}
	return e
}

// normalize folds case and drops punctuation and spaces, so that
// "NVIDIA H100 80GB HBM3", "h100-80gb-hbm3" and "nvidia_h100_80gb_hbm3" meet.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Lookup finds a device by name or alias, ignoring case, spaces and
// punctuation, and a leading "NVIDIA" or "Tesla" as nvidia-smi prints them. An
// unknown name fails with the closest names.
func (c *Catalog) Lookup(name string) (Device, error) {
	k := normalize(name)
	for _, cand := range []string{k, strings.TrimPrefix(k, "nvidia"), strings.TrimPrefix(strings.TrimPrefix(k, "nvidia"), "tesla")} {
		if i, ok := c.index[cand]; ok {
			return c.devices[i].clone(), nil
		}
	}
	return Device{}, fmt.Errorf("unknown device %q; closest: %s (see 'gpucalc devices')", name, strings.Join(c.closest(k, 3), ", "))
}

// closest returns the n catalog names nearest to k (a normalised name):
// each device scores its best name or alias.
func (c *Catalog) closest(k string, n int) []string {
	keys := map[string][]string{}
	for key, i := range c.index {
		keys[c.devices[i].Name] = append(keys[c.devices[i].Name], key)
	}
	return names.Closest(k, keys, n)
}

// Devices lists the catalog's devices in catalog order (vendor, then
// compute capability, then name).
func (c *Catalog) Devices() []Device {
	out := make([]Device, len(c.devices))
	for i, d := range c.devices {
		out[i] = d.clone()
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Vendor != b.Vendor {
			return a.Vendor > b.Vendor // NVIDIA first
		}
		if a.CC != b.CC {
			if a.CC.Major != b.CC.Major {
				return a.CC.Major < b.CC.Major
			}
			return a.CC.Minor < b.CC.Minor
		}
		return a.Name < b.Name
	})
	return out
}

// Names lists every name and alias, for shell completion.
func (c *Catalog) Names() []string {
	var out []string
	for _, d := range c.Devices() {
		out = append(out, d.Name)
	}
	return out
}

// Limits resolves a device name or an architecture (sm_90, 9.0) to the
// occupancy limits, for inputs that may give either.
func (c *Catalog) Limits(nameOrArch string) (Arch, error) {
	if cc, err := ParseCC(nameOrArch); err == nil {
		return ArchFor(cc)
	}
	d, err := c.Lookup(nameOrArch)
	if err != nil {
		return Arch{}, fmt.Errorf("%w, or an architecture such as sm_90 or 9.0", err)
	}
	return d.Limits()
}
