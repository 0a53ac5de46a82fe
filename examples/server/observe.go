package main

import (
	"github.com/gatewaykit/gatewaykit/gateway"
)

// readyChecks are the dependencies that /readyz asks beside the stores
// and the relay, which package gateway finds itself: the Redis limiter of
// -redis, which every replica shares (gateway.Shared: its outage is
// reported, and does not make the replicas unready).
func readyChecks(st *stores) map[string]gateway.Pinger {
	if p, ok := st.limiter.(gateway.Pinger); ok {
		return map[string]gateway.Pinger{"redis": gateway.Shared(p)}
	}
	return nil
}
