module github.com/gatewaykit/gatewaykit

go 1.25.0

require (
	github.com/go-playground/validator/v10 v10.30.4
	github.com/google/go-cmp v0.7.0
	github.com/stretchr/testify v1.12.1
	github.com/tmaxmax/go-sse v0.11.0
	golang.org/x/sync v0.22.0
)

require (
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.1 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
