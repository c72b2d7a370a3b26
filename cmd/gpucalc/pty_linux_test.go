package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a pseudo-terminal cols columns wide: the controlling side,
// and the terminal a program writes to.
func openPty(t *testing.T, cols uint16) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(ptm.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: cols}); err != nil {
		t.Fatal(err)
	}
	return ptm, pts
}

// onPty runs gpucalc in-process with standard output on a pseudo-terminal
// cols columns wide and returns what the terminal got.
func onPty(t *testing.T, cols uint16, env map[string]string, args ...string) string {
	t.Helper()
	ptm, pts := openPty(t, cols)
	defer ptm.Close()
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&got, ptm) // ends with EIO once the terminal side is closed
		close(done)
	}()
	var errOut bytes.Buffer
	code := run(args, strings.NewReader(""), pts, &errOut, func(k string) string { return env[k] })
	pts.Close()
	<-done
	if code != 0 {
		t.Fatalf("gpucalc %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return strings.ReplaceAll(got.String(), "\r\n", "\n") // the terminal's line discipline adds \r
}

// On a real terminal the width comes from the terminal (100 columns here),
// or from COLUMNS when set; what the terminal gets is what the factory's
// width gives, and no line is wider. A pipe gets the full table whatever
// COLUMNS says.
func TestPtyWidth(t *testing.T) {
	trace := repoRoot + "/trace/testdata/trace_resnet50_train.json.gz"
	for _, args := range [][]string{{"devices", "show", "h100"}, {"trace", trace}, {"devices"}} {
		for _, tc := range []struct {
			cols    uint16
			columns string
			want    int
		}{{100, "", 100}, {100, "80", 80}} {
			got := onPty(t, tc.cols, map[string]string{"COLUMNS": tc.columns}, args...)
			if line, n := widest(got); n > tc.want {
				t.Errorf("%s on a %d-column terminal, COLUMNS=%q: a line of %d columns:\n%s", strings.Join(args, " "), tc.cols, tc.columns, n, line)
			}
			var out bytes.Buffer
			f := newFactory(strings.NewReader(""), &out, io.Discard, func(string) string { return "" })
			f.width = tc.want
			if code := runFactory(f, args); code != 0 || out.String() != got {
				t.Errorf("%s: the terminal got other output than the factory's width %d gives (exit %d)", strings.Join(args, " "), tc.want, code)
			}
		}
		// A pipe: full tables, COLUMNS or not.
		_, full := widest(runPipe(t, nil, args...))
		_, piped := widest(runPipe(t, map[string]string{"COLUMNS": "80"}, args...))
		if full <= 100 || piped != full {
			t.Errorf("%s through a pipe: widest line %d columns, %d with COLUMNS=80; want the full table both times", strings.Join(args, " "), full, piped)
		}
		// --wide: the full table on a terminal too.
		if _, n := widest(onPty(t, 100, nil, append(args, "--wide")...)); n != full {
			t.Errorf("%s --wide on a terminal: widest line %d columns, want the full %d", strings.Join(args, " "), n, full)
		}
	}
}

// runPipe runs gpucalc with standard output to a buffer, as a pipe.
func runPipe(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(args, strings.NewReader(""), &out, &errOut, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("gpucalc %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}
