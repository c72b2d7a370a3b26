package devices

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/query"
)

// Default is the device a question runs on when it names none and
// $GPUCALC_DEVICE is not set: the one definition of it, for the CLI, the
// web calculator and the reports alike.
const Default = "H100 SXM"

// Origins of a device a question did not name, as the output states them.
const (
	OriginEnv     = "from GPUCALC_DEVICE"
	OriginDefault = "default; set --device or GPUCALC_DEVICE"
)

// Choice is which GPUs a question runs on, as the user named them: Device
// names one (--device), Devices several to compare (--devices). The Given
// fields say which was named, so that a name given empty is refused rather
// than taken for the default. With neither, Env ($GPUCALC_DEVICE) names the
// device, else Default.
type Choice struct {
	Device       string
	Devices      []string
	DeviceGiven  bool
	DevicesGiven bool
	// Env is $GPUCALC_DEVICE, used when no device is named.
	Env string
}

// Chosen is one device a question runs on and where its name came from
// ("" when the user named it, OriginEnv or OriginDefault).
type Chosen struct {
	Device
	Origin string
}

// Named returns a choice of the given names: one is a --device, several a
// --devices (what a web form's device list maps onto). No name is a
// --devices given empty, which Resolve refuses.
func Named(names []string) Choice {
	if len(names) == 1 {
		return Choice{Device: names[0], DeviceGiven: true}
	}
	return Choice{Devices: names, DevicesGiven: true}
}

// Resolve looks the choice up in c (nil: the built-in catalog), each
// device as Datasheet gives it when datasheet is set. Every way a choice
// can be wrong is a field error under the flag's name: both flags, an empty
// name, an unknown name (with the closest), a device named twice.
func (ch Choice) Resolve(c *Catalog, datasheet bool) ([]Chosen, error) {
	if c == nil {
		var err error
		if c, err = Builtin(); err != nil {
			return nil, err
		}
	}
	lookup := func(name string) (Device, error) {
		d, err := c.Lookup(name)
		if err == nil && datasheet {
			d = d.Datasheet()
		}
		return d, err
	}
	list := strings.Join(ch.Devices, ",")
	switch {
	case ch.DeviceGiven && ch.DevicesGiven:
		return nil, &query.FieldError{Field: "devices", Value: list, Allowed: "give --device or --devices, not both"}
	case ch.DevicesGiven:
	case ch.DeviceGiven && strings.TrimSpace(ch.Device) == "":
		return nil, &query.FieldError{Field: "device", Value: ch.Device, Allowed: "empty; give a GPU name from 'gpucalc devices'"}
	default:
		name, origin := ch.Name()
		d, err := lookup(name)
		if err != nil {
			if origin == OriginEnv {
				return nil, &query.FieldError{Field: "GPUCALC_DEVICE", Value: name, Allowed: err.Error(), Source: query.FromEnv}
			}
			return nil, &query.FieldError{Field: "device", Value: name, Allowed: err.Error()}
		}
		return []Chosen{{d, origin}}, nil
	}
	if len(ch.Devices) == 0 {
		return nil, &query.FieldError{Field: "devices", Value: "", Allowed: "empty; give comma-separated GPU names from 'gpucalc devices'"}
	}
	var out []Chosen
	seen := map[string]string{}
	for _, n := range ch.Devices {
		if strings.TrimSpace(n) == "" {
			return nil, &query.FieldError{Field: "devices", Value: list, Allowed: "an empty name; give comma-separated GPU names"}
		}
		d, err := lookup(n)
		if err != nil {
			return nil, &query.FieldError{Field: "devices", Value: list, Allowed: err.Error()}
		}
		if prev, ok := seen[d.Name]; ok {
			return nil, &query.FieldError{Field: "devices", Value: list, Allowed: fmt.Sprintf("names %s twice (%q and %q)", d.Name, prev, n)}
		}
		seen[d.Name] = n
		out = append(out, Chosen{d, ""})
	}
	return out, nil
}

// Name is the one device a choice that names no list resolves to, and
// where the name came from: Device when given, else Env, else Default.
func (ch Choice) Name() (name, origin string) {
	switch {
	case ch.DeviceGiven:
		return ch.Device, ""
	case ch.Env != "":
		return ch.Env, OriginEnv
	}
	return Default, OriginDefault
}

// Args adds the flags that name the choice's devices to a command line:
// none for a device not named (the default, or $GPUCALC_DEVICE's).
func (ch Choice) Args(a *query.Args) {
	if ch.DeviceGiven {
		a.Add("device", ch.Device)
	}
	if ch.DevicesGiven {
		a.Add("devices", strings.Join(ch.Devices, ","))
	}
}

// Key is the short name a device goes by in URLs and command lines: its
// first alias, else its name.
func (d Device) Key() string {
	if len(d.Aliases) > 0 {
		return d.Aliases[0]
	}
	return d.Name
}
