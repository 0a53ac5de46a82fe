package pipeline

import "github.com/gatewaykit/gatewaykit/models"

// MustHave panics, as the NewHandler of package pkg does at
// construction, if catalog or backend is nil.
func MustHave(pkg string, catalog models.Catalog, backend any) {
	if catalog == nil {
		panic(pkg + ": NewHandler: nil Catalog")
	}
	if backend == nil {
		panic(pkg + ": NewHandler: nil Backend")
	}
}
