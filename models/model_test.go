package models_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/models/modelstest"
)

func TestParseModelsConfigFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "config.json"))
	require.NoError(t, err)
	got, err := models.ParseModels(data)
	require.NoError(t, err)
	want := []models.Model{
		{
			ID:               "gpt-4o-mini",
			EndpointTypes:    []models.EndpointType{models.Compat, models.CompatResponse},
			OwnedBy:          "openai",
			Created:          1721172741,
			DisplayName:      "GPT-4o mini",
			Description:      "Small, fast model",
			Version:          "2024-07-18",
			InputTokenLimit:  128000,
			OutputTokenLimit: 16384,
		},
		{ID: "deep-thinker", EndpointTypes: []models.EndpointType{models.Compat}, Reasoning: true},
		{
			ID:            "vendor-video-1",
			EndpointTypes: []models.EndpointType{models.CompatVideo},
			Video: &models.VideoCapabilities{
				Modes:          []models.VideoMode{models.ModeT2V, models.ModeI2V, models.ModeFirstLastFrame},
				Seconds:        models.FirstKindSeconds(),
				DefaultSeconds: 8,
				Sizes:          []string{"1280x720", "720x1280"},
				SizeRequired:   true,
				DefaultSize:    "1280x720",
				Resolutions:    []string{models.Resolution720p, models.Resolution1080p},
				MaxPromptChars: 2500,
			},
		},
		{ID: "any-video", EndpointTypes: []models.EndpointType{models.CompatVideo}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseModels mismatch (-want +got):\n%s", diff)
	}
}

func TestParseModelsRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		json  string
		wants []string // substrings of the error, one per problem
	}{
		{"NotJSON", `{`, []string{"decode model list"}},
		{"NotAnArray", `{"id":"a"}`, []string{"decode model list"}},
		{"Null", `null`, []string{"want a JSON array"}},
		{"TrailingData", `[] []`, []string{"data after the array"}},
		{"UnknownField", `[{"id":"a","supported_endpoint_types":["compat"],"owner":"x"}]`, []string{`unknown field "owner"`}},
		{"UnknownVideoField", `[{"id":"a","supported_endpoint_types":["compat-video"],"video":{"second":[4]}}]`, []string{`unknown field "second"`}},
		{"WrongType", `[{"id":"a","supported_endpoint_types":["compat"],"created":"yesterday"}]`, []string{"created"}},
		{"MissingID", `[{"supported_endpoint_types":["compat"]}]`, []string{"models[0]", "id: is required"}},
		{"PaddedID", `[{"id":" a","supported_endpoint_types":["compat"]}]`, []string{"id: has leading or trailing spaces"}},
		{"DuplicateID", `[{"id":"a","supported_endpoint_types":["compat"]},{"id":"a","supported_endpoint_types":["compat"]}]`, []string{`models[1]: id "a" already used by models[0]`}},
		{"NoEndpointTypes", `[{"id":"a"}]`, []string{"supported_endpoint_types: at least one"}},
		{"UnknownEndpointType", `[{"id":"a","supported_endpoint_types":["compat_video"]}]`, []string{`supported_endpoint_types[0]: unknown endpoint type "compat_video"`}},
		{"DuplicateEndpointType", `[{"id":"a","supported_endpoint_types":["compat","compat"]}]`, []string{`supported_endpoint_types[1]: duplicate "compat"`}},
		{"NegativeNumbers", `[{"id":"a","supported_endpoint_types":["compat"],"created":-1,"input_token_limit":-1,"output_token_limit":-1}]`,
			[]string{"created: is negative", "input_token_limit: is negative", "output_token_limit: is negative"}},
		{"VideoWithoutCompatVideo", `[{"id":"a","supported_endpoint_types":["compat"],"video":{}}]`, []string{`video: is set but supported_endpoint_types lacks "compat-video"`}},
		{"BadVideo", `[{"id":"v","supported_endpoint_types":["compat-video"],"video":{
			"modes":["t2v","t2v","v2t"],
			"seconds":[4,0,4],
			"default_seconds":5,
			"sizes":["1280x720","1280*720","0x720","+1x2","1280x720"],
			"default_size":"640x480",
			"resolutions":["720p","4k","720p"],
			"max_prompt_chars":-1}}]`,
			[]string{
				`video.modes[1]: duplicate "t2v"`, `video.modes[2]: unknown mode "v2t"`,
				"video.seconds[1]: 0 is not positive", "video.seconds[2]: duplicate 4",
				"video.default_seconds: 5 is not in seconds",
				`video.sizes[1]: "1280*720" is not <width>x<height>`, `video.sizes[2]: "0x720"`, `video.sizes[3]: "+1x2"`, `video.sizes[4]: duplicate "1280x720"`,
				`video.default_size: "640x480"`,
				`video.resolutions[1]: unknown resolution "4k"`, `video.resolutions[2]: duplicate "720p"`,
				"video.max_prompt_chars: is negative",
			}},
		{"NegativeDefaultSeconds", `[{"id":"v","supported_endpoint_types":["compat-video"],"video":{"default_seconds":-4}}]`, []string{"video.default_seconds: is negative"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := models.ParseModels([]byte(tc.json))
			require.Error(t, err)
			require.Nil(t, got)
			for _, want := range tc.wants {
				require.ErrorContains(t, err, want)
			}
		})
	}
}

func TestValidateModelsAcceptsFixtures(t *testing.T) {
	t.Parallel()
	require.NoError(t, models.ValidateModels(modelstest.Fixtures()))
	require.NoError(t, models.ValidateModels(nil))
}

func TestVideoCapabilities(t *testing.T) {
	t.Parallel()
	var none *models.VideoCapabilities
	zero := &models.VideoCapabilities{}
	first := modelstest.Fixtures()[2].Video

	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"NilAllowsAnyMode", none.AllowsMode(models.ModeVideoEdit), true},
		{"ZeroAllowsAnyMode", zero.AllowsMode(models.ModeRefImage), true},
		{"ListedMode", first.AllowsMode(models.ModeI2V), true},
		{"UnlistedMode", first.AllowsMode(models.ModeVideoEdit), false},

		{"NilAllowsAnyPositiveSeconds", none.AllowsSeconds(7), true},
		{"NilRejectsZeroSeconds", none.AllowsSeconds(0), false},
		{"ZeroRejectsNegativeSeconds", zero.AllowsSeconds(-4), false},
		{"FirstKindAllows20", first.AllowsSeconds(20), true},
		{"FirstKindRejects10", first.AllowsSeconds(10), false},

		{"NilAllowsAnyWellFormedSize", none.AllowsSize("640x480"), true},
		{"NilRejectsMalformedSize", none.AllowsSize("640:480"), false},
		{"ZeroRejectsZeroWidth", zero.AllowsSize("0x480"), false},
		{"ZeroRejectsMissingHeight", zero.AllowsSize("640x"), false},
		{"ListedSize", first.AllowsSize("720x1280"), true},
		{"UnlistedSize", first.AllowsSize("640x480"), false},

		{"NilAllows1080p", none.AllowsResolution("1080p"), true},
		{"NilRejects4k", none.AllowsResolution("4k"), false},
		{"ListedResolution", first.AllowsResolution("720p"), true},
		{"UnlistedResolution", (&models.VideoCapabilities{Resolutions: []string{"720p"}}).AllowsResolution("1080p"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.got)
		})
	}

	require.Equal(t, models.DefaultPromptLimit, none.PromptLimit())
	require.Equal(t, 2500, zero.PromptLimit())
	require.Equal(t, 2000, first.PromptLimit())
}

func TestModelCloneSharesNothing(t *testing.T) {
	t.Parallel()
	orig := modelstest.Fixtures()[2]
	c := orig.Clone()
	require.Equal(t, orig, c)
	c.EndpointTypes[0] = models.Compat
	c.Video.Modes[0] = models.ModeVideoEdit
	c.Video.Seconds[0] = 99
	c.Video.Sizes[0] = "1x1"
	c.Video.Resolutions[0] = "1080p"
	c.Video.SizeRequired = false
	require.Equal(t, modelstest.Fixtures()[2], orig)
}

func TestModelSupports(t *testing.T) {
	t.Parallel()
	m := modelstest.Fixtures()[1]
	require.True(t, m.Supports(models.Compat))
	require.True(t, m.Supports(models.CompatResponse))
	require.False(t, m.Supports(models.CompatVideo))
}

// FuzzParseModels checks that the configuration decoder never panics, and
// that a list it accepts survives a round trip through its JSON form.
func FuzzParseModels(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "config.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"id":"a","supported_endpoint_types":["compat"]}]`))
	f.Add([]byte(`[{"id":"v","supported_endpoint_types":["compat-video"],"video":{"sizes":["1x1"],"default_size":"1x1"}}]`))
	f.Add([]byte(`[{"id":"a","supported_endpoint_types":["compat"],"video":null}] `))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := models.ParseModels(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(list)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := models.ParseModels(out)
		if err != nil {
			t.Fatalf("ParseModels of own output %s: %v", out, err)
		}
		// omitempty turns an empty list into an absent one.
		if diff := cmp.Diff(list, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip mismatch (-first +second):\n%s", diff)
		}
		if models.NewMemoryCatalog(list...) == nil {
			t.Fatal("NewMemoryCatalog returned nil")
		}
	})
}

// TestCostIsFinite: a cost is never negative, NaN or infinite, whatever
// the counts and prices (an absurd usage, an unchecked price): a budget
// in money compares against it, and JSON cannot carry NaN or Inf.
func TestCostIsFinite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		p             models.Pricing
		input, output int64
		seconds       float64
		cost, video   float64
	}{
		{name: "Usual", p: models.Pricing{InputPerMillion: 2, OutputPerMillion: 4, PerSecond: 0.5}, input: 1e6, output: 5e5, seconds: 4, cost: 4, video: 2},
		{name: "NegativeCounts", p: models.Pricing{InputPerMillion: 2, OutputPerMillion: 4}, input: -1e6, output: -1, seconds: -4},
		{name: "HugePrices", p: models.Pricing{InputPerMillion: math.MaxFloat64, OutputPerMillion: math.MaxFloat64, PerSecond: math.MaxFloat64}, input: math.MaxInt64, output: math.MaxInt64, seconds: math.MaxFloat64, cost: math.MaxFloat64, video: math.MaxFloat64},
		{name: "InfiniteSeconds", p: models.Pricing{PerSecond: 1}, seconds: math.Inf(1), video: math.MaxFloat64},
		{name: "BadPrices", p: models.Pricing{InputPerMillion: math.NaN(), OutputPerMillion: -1, PerSecond: math.Inf(-1)}, input: 10, output: 10, seconds: 10},
		{name: "InfinitePrices", p: models.Pricing{InputPerMillion: math.Inf(1), PerSecond: math.Inf(1)}, input: 0, output: 10, seconds: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.cost, tc.p.Cost(tc.input, tc.output))
			require.Equal(t, tc.video, tc.p.VideoCost(tc.seconds))
		})
	}
}

// TestPricingTokensCost: each part of the input and output at its own
// rate, an unset rate being the input or output rate and 0 free; the
// parts at most their whole; never negative (issue 26).
func TestPricingTokensCost(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	base := models.Pricing{InputPerMillion: 2, OutputPerMillion: 10}
	all := models.Pricing{InputPerMillion: 2, OutputPerMillion: 10, CachedInputPerMillion: f(0.5), CacheWritePerMillion: f(4), ReasoningPerMillion: f(20)}
	free := models.Pricing{InputPerMillion: 2, OutputPerMillion: 10, CachedInputPerMillion: f(0), CacheWritePerMillion: f(0), ReasoningPerMillion: f(0)}
	const M = 1_000_000
	for _, tc := range []struct {
		name string
		p    *models.Pricing
		t    models.Tokens
		want float64
	}{
		{"nil is free", nil, models.Tokens{Input: M, Output: M}, 0},
		{"unset rates are the input and output rates", &base, models.Tokens{Input: M, Cached: M / 2, CacheWrite: M / 4, Output: M, Reasoning: M / 2}, 12},
		{"each part at its rate", &all, models.Tokens{Input: M, Cached: M / 2, CacheWrite: M / 4, Output: M, Reasoning: M / 2},
			0.25*2 + 0.5*0.5 + 0.25*4 + 0.5*10 + 0.5*20},
		{"0 is free", &free, models.Tokens{Input: M, Cached: M, Output: M, Reasoning: M}, 0},
		{"parts over their whole", &all, models.Tokens{Input: M, Cached: 2 * M, CacheWrite: M, Output: M, Reasoning: 3 * M}, 0.5 + 20},
		{"cache writes at most the uncached input", &all, models.Tokens{Input: M, Cached: M / 2, CacheWrite: M}, 0.25 + 2},
		{"negative counts", &all, models.Tokens{Input: -M, Cached: -M, CacheWrite: -M, Output: -M, Reasoning: -M}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, tc.want, tc.p.TokensCost(tc.t), 1e-9)
		})
	}
	require.Equal(t, base.Cost(M, M), base.TokensCost(models.Tokens{Input: M, Output: M}), "Cost is TokensCost without parts")
}

// TestPricingRatesValidated: the optional rates are checked as the
// others, and round-trip through the configuration.
func TestPricingRatesValidated(t *testing.T) {
	t.Parallel()
	_, err := models.ParseModels([]byte(`[{"id":"a","supported_endpoint_types":["compat"],"pricing":{"cached_input_per_million":-1}}]`))
	require.ErrorContains(t, err, "pricing.cached_input_per_million")
	list, err := models.ParseModels([]byte(`[{"id":"a","supported_endpoint_types":["compat"],"pricing":{"input_per_million":3,"cached_input_per_million":0,"reasoning_per_million":9}}]`))
	require.NoError(t, err)
	p := list[0].Pricing
	require.NotNil(t, p.CachedInputPerMillion)
	require.Zero(t, *p.CachedInputPerMillion, "0 is kept: free, not unset")
	require.Nil(t, p.CacheWritePerMillion)
	require.Equal(t, 9.0, *p.ReasoningPerMillion)
	c := list[0].Clone()
	*c.Pricing.ReasoningPerMillion = 1
	require.Equal(t, 9.0, *p.ReasoningPerMillion, "Clone shares no rate")
}
