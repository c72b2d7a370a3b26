package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gpucalc/gpucalc/rows"
)

// upload is the reports form as posted: the file and the device.
type upload struct {
	name, device string
	data         []byte
}

// maxParts bounds the parts of the reports form (it has two).
const maxParts = 8

// readUpload reads the reports form, a multipart/form-data body, part by
// part: the file held in memory within MaxUpload, never spilled to a
// temporary file. A refusal comes back as the answer to send.
func readUpload(r *http.Request) (upload, *answer) {
	var u upload
	refused := func(status int, format string, args ...any) (upload, *answer) {
		return u, &answer{status: status, Errors: fieldErrors{"file": fmt.Sprintf(format, args...)}}
	}
	mr, err := r.MultipartReader()
	if err != nil {
		ct := r.Header.Get("Content-Type")
		if mt, _, _ := mime.ParseMediaType(ct); mt == "multipart/form-data" {
			return refused(http.StatusBadRequest, "the form's Content-Type %q has no boundary: send the file as the Reports page does (a multipart/form-data form with a part named \"file\")", ct)
		}
		return refused(http.StatusUnsupportedMediaType, "POST /api/report takes a multipart/form-data form with the file in a part named \"file\" (and the device in \"device\"), as the Reports page sends it; got Content-Type %q", ct)
	}
	file := false
	for parts := 0; ; parts++ {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if tooLarge(err) {
				return refused(http.StatusRequestEntityTooLarge, "the file is larger than the %d MiB allowed", MaxUpload>>20)
			}
			return refused(http.StatusBadRequest, "the form is not well-formed multipart/form-data (%v): send the file as the Reports page does", err)
		}
		if parts == maxParts {
			return refused(http.StatusBadRequest, "the form has more than %d parts; it takes \"file\" and \"device\"", maxParts)
		}
		switch p.FormName() {
		case "file":
			file = true
			u.name = path.Base(p.FileName())
			if u.data, err = readPart(p, MaxUpload); err != nil {
				if tooLarge(err) {
					return refused(http.StatusRequestEntityTooLarge, "the file is larger than the %d MiB allowed", MaxUpload>>20)
				}
				return refused(http.StatusBadRequest, "reading the file: %v", err)
			}
		case "device":
			d, err := readPart(p, 1<<10)
			if err != nil {
				return u, &answer{status: http.StatusBadRequest, Errors: fieldErrors{"device": "not a device name: " + err.Error()}}
			}
			u.device = string(d)
		}
		p.Close()
	}
	if !file {
		return refused(http.StatusUnprocessableEntity, "choose or drop a file: an Nsight Compute CSV export, a torch.profiler trace or a workload YAML")
	}
	return u, nil
}

// errPartTooLarge is a form part over its limit.
var errPartTooLarge = errors.New("larger than allowed")

// readPart reads a part of at most max bytes.
func readPart(p io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(p, max+1))
	if err == nil && int64(len(data)) > max {
		err = errPartTooLarge
	}
	return data, err
}

// tooLarge reports whether reading the body failed on a size limit: the
// part's or the whole body's (http.MaxBytesReader).
func tooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.Is(err, errPartTooLarge) || errors.As(err, &mb)
}

// errInflated is a gzip upload that decompresses past maxInflated.
var errInflated = fmt.Errorf("decompresses to more than %d MiB, the server's limit for a gzip upload; give the file to the command line", maxInflated>>20)

// open returns the upload as its reader reads it: decompressed when it is
// gzip (rows.Decompress, as the command line's inputs are), cut off with
// errInflated past maxInflated bytes as they stream, so a small file that
// expands to gigabytes costs no more than the limit, and with ctx's error
// once the request's deadline passes or its client goes away, so that a
// reader stops within one buffer of either.
func open(ctx context.Context, data []byte) (io.Reader, error) {
	r, gzipped, err := rows.Decompress(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if gzipped {
		r = inflated{rows.Limit(r, maxInflated)}
	}
	return ctxReader{ctx, r}, nil
}

// inflated words the limit's error as the server's: every read past the
// limit fails with errInflated, so a parser that reads on gets no more of
// the stream.
type inflated struct{ r io.Reader }

func (z inflated) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	var se *rows.SizeError
	if errors.As(err, &se) {
		return 0, errInflated
	}
	return n, err
}

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// sniffBytes is how much of a file kindOf reads to tell its kind.
const sniffBytes = 4096

// kindOf tells an Nsight Compute export ("ncu"), a torch.profiler trace
// ("trace") and a workload ("workload") apart: by the file's extension,
// else by its first bytes. A gzip file is told by the name under .gz and by
// its content after decompression, as the CLI reads it.
func kindOf(name string, data []byte) string {
	if rows.IsGzip(data) {
		if strings.EqualFold(path.Ext(name), ".gz") {
			name = strings.TrimSuffix(name, path.Ext(name))
		}
		z, _, err := rows.Decompress(bytes.NewReader(data))
		if err != nil {
			return "trace" // the trace reader says what is wrong with it
		}
		data, _ = io.ReadAll(io.LimitReader(z, sniffBytes))
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return "ncu"
	case ".json":
		return "trace"
	case ".yaml", ".yml":
		return "workload"
	}
	for _, line := range strings.Split(string(data[:min(len(data), sniffBytes)]), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
			return "trace"
		case strings.HasPrefix(t, `"`) || strings.HasPrefix(t, "=="): // ==PROF==, ==WARNING==
			return "ncu"
		}
		break
	}
	return "workload"
}
