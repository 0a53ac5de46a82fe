package runner

import "time"

// SetStoreBackoff sets r's wait before its second try at storing a
// result, for tests that must not wait seconds. Call it before Run.
func SetStoreBackoff(r *Runner, d time.Duration) { r.cfg.backoff = d }
