// Package quietlog gives the kit's handlers their default logger, one
// that logs nothing, which the options that set a logger restore for a
// nil one.
package quietlog

import "log/slog"

// Discard is a logger that logs nothing.
var Discard = slog.New(slog.DiscardHandler)

// Or returns l, or [Discard] if l is nil.
func Or(l *slog.Logger) *slog.Logger {
	if l == nil {
		return Discard
	}
	return l
}
