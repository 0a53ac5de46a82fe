package relay

import "time"

// SetClock sets the clock of r's cool-downs, for tests. Call it before r
// is used, and before NewAccessHandler copies r.
func SetClock(r *Relay, now func() time.Time) { r.now = now }
