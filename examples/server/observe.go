package main

import (
	"github.com/gatewaykit/gatewaykit/gateway"
)

// readyChecks are the dependencies that /readyz asks beside the stores
// and the relay, which package gateway finds itself: the Redis limiter of
// -redis.
func readyChecks(st *stores) map[string]gateway.Pinger {
	if p, ok := st.limiter.(gateway.Pinger); ok {
		return map[string]gateway.Pinger{"redis": p}
	}
	return nil
}
