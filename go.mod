module github.com/coworkenv/coworkenv

go 1.26.8

require (
	github.com/sashabaranov/go-openai v1.43.0
	github.com/spf13/afero v1.15.0
	github.com/stretchr/testify v1.12.1
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.42.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)
