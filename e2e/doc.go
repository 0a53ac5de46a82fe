// Package e2e holds the end-to-end tests that run the example programs as
// a user would, as separate processes on loopback, and drive them with
// clients that are not written in Go: the official OpenAI Node SDK
// (e2e/node), once against examples/server and once through
// examples/relay in front of it; and, when GATEWAYKIT_TEST_POSTGRES names
// a PostgreSQL server (and psql is installed), its conversation test
// across two examples/server replicas on a database of its own.
//
// The Node tests need Node.js 20 or later and the SDK installed with
// "npm ci --prefix e2e/node". Without them the tests skip, unless
// GATEWAYKIT_NODE_SDK=1 (as in .ci/run) makes their absence a failure.
package e2e
