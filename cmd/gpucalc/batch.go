package main

import (
	"fmt"

	"github.com/gpucalc/gpucalc/reports"
)

// batchRowsHelp is model and train batch's help on bad rows.
const batchRowsHelp = `A bad row gets its error in the error column and never stops the batch; the
exit code is 1 if any row failed.`

// noBatchRows is the error of a batch input with no rows to answer: the
// reading error that stopped it, else that it has only a header; nil when
// it has rows.
func noBatchRows(rows int, name string, readErr error) error {
	switch {
	case rows > 0:
		return nil
	case readErr != nil:
		return readErr
	}
	return fmt.Errorf("%s: the batch has a header but no rows", name)
}

// writeBatch writes a batch's answered rows, as JSON or as a table, and
// returns its closing error (batchFailures, the count of failed rows
// naming the input).
func writeBatch[R any](f *factory, form reports.Format, name string, rows []R, rowErr func(R) error, readErr error,
	asJSON func() any, asTable func() reports.Table) error {
	failed := 0
	for _, r := range rows {
		if rowErr(r) != nil {
			failed++
		}
	}
	var view any // built for JSON only: a batch can be long
	if form == reports.FormatJSON {
		view = asJSON()
	}
	table := func() []reports.Table { return []reports.Table{asTable()} }
	if err := f.Output(form, nil, nil, view, table, table); err != nil {
		return err
	}
	err := batchFailures(failed, len(rows), readErr)
	if err != nil && readErr == nil {
		err = fmt.Errorf("%s: %w", name, err)
	}
	return err
}

// batchFailures is a batch command's closing error: the reading error that
// cut the input short, else how many rows failed (their messages are in the
// output's error column), else nil.
func batchFailures(failed, rows int, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("%w (the %d rows before it are written)", readErr, rows)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rows failed; see the error column", failed, rows)
	}
	return nil
}
