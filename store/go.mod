module github.com/gatewaykit/gatewaykit/store

go 1.26.0

// In this repository the kit is the one beside this module; go.work says
// so too. Consumers get the version they require.
replace github.com/gatewaykit/gatewaykit => ../
