package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/spf13/cobra"
)

// deviceValue is --device: a name that must not be empty (an empty one
// would silently mean the default).
type deviceValue struct{ p *string }

func (v deviceValue) String() string { return *v.p }
func (v deviceValue) Type() string   { return "string" }
func (v deviceValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty GPU name; give one from 'gpucalc devices', or leave --device out for the default")
	}
	*v.p = strings.TrimSpace(s)
	return nil
}

// devicesValue is --devices: comma-separated names, none empty, none twice.
type devicesValue struct{ p *[]string }

func (v devicesValue) String() string { return strings.Join(*v.p, ",") }
func (v devicesValue) Type() string   { return "strings" }
func (v devicesValue) Set(s string) error {
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return fmt.Errorf("%q has an empty GPU name; give comma-separated names from 'gpucalc devices'", s)
		}
		for _, prev := range *v.p {
			if strings.EqualFold(prev, n) {
				return fmt.Errorf("%s is given twice", n)
			}
		}
		*v.p = append(*v.p, n)
	}
	return nil
}

// addDevicesFlag adds --devices with completion.
func (a *app) addDevicesFlag(cmd *cobra.Command, p *[]string, usage string) {
	cmd.Flags().Var(devicesValue{p}, "devices", usage)
	_ = cmd.RegisterFlagCompletionFunc("devices", a.completeDevices)
}

// Devices looks up several devices; two names for one device are an error.
func (a *app) Devices(names []string) ([]devices.Device, error) {
	var out []devices.Device
	for i, n := range names {
		d, _, err := a.Device(n)
		if err != nil {
			return nil, err
		}
		for j, prev := range out {
			if prev.Name == d.Name {
				return nil, usageError{fmt.Errorf("--devices: %s and %s are the same GPU (%s)", names[j], names[i], d.Name)}
			}
		}
		out = append(out, d)
	}
	return out, nil
}
