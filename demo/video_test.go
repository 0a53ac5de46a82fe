package demo_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

func videoTask(prompt, size, seconds string) *videos.Task {
	return &videos.Task{
		ID:      videos.NewID(),
		Status:  videos.StatusInProgress,
		Size:    size,
		Seconds: seconds,
		Request: videos.Request{Create: &videos.CreateRequest{Model: demo.VideoModelGeneral, Prompt: prompt, Size: size, Seconds: videos.Seconds(seconds)}},
	}
}

func generateVideo(t *testing.T, g *demo.VideoGenerator, task *videos.Task) *videos.Result {
	t.Helper()
	res, err := g.Generate(context.Background(), task, func(int) {})
	require.NoError(t, err)
	return res
}

// mp4Box is one parsed ISO-BMFF box.
type mp4Box struct {
	typ     string
	payload []byte
	offset  int // of the payload, in the file
}

func parseBoxes(t *testing.T, b []byte, base int) []mp4Box {
	t.Helper()
	var out []mp4Box
	for len(b) > 0 {
		require.GreaterOrEqual(t, len(b), 8, "truncated box header")
		size := int(binary.BigEndian.Uint32(b))
		require.GreaterOrEqual(t, size, 8)
		require.LessOrEqual(t, size, len(b), "box %q overruns its parent", b[4:8])
		out = append(out, mp4Box{typ: string(b[4:8]), payload: b[8:size], offset: base + 8})
		base += size
		b = b[size:]
	}
	return out
}

func child(t *testing.T, boxes []mp4Box, path ...string) mp4Box {
	t.Helper()
	for _, bx := range boxes {
		if bx.typ != path[0] {
			continue
		}
		if len(path) == 1 {
			return bx
		}
		payload, off := bx.payload, bx.offset
		switch bx.typ {
		case "stsd": // full box + entry count
			payload, off = payload[8:], off+8
		case "avc1": // sample entry fields
			payload, off = payload[78:], off+78
		case "dref":
			payload, off = payload[8:], off+8
		}
		return child(t, parseBoxes(t, payload, off), path[1:]...)
	}
	t.Fatalf("no box %q", path[0])
	return mp4Box{}
}

func be32(b []byte, i int) int { return int(binary.BigEndian.Uint32(b[i:])) }

// bitReader reads Exp-Golomb codes from an RBSP, to check the SPS.
type bitReader struct {
	b   []byte
	pos int
}

func (r *bitReader) u(n int) int {
	v := 0
	for range n {
		v = v<<1 | int(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() int {
	zeros := 0
	for r.u(1) == 0 {
		zeros++
	}
	return (1<<zeros - 1) + r.u(zeros)
}

func unescape(nal []byte) []byte {
	var out []byte
	zeros := 0
	for _, c := range nal {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// spsSize decodes the picture size of a Baseline SPS as the demo writes it.
func spsSize(t *testing.T, sps []byte) (w, h int) {
	t.Helper()
	require.Equal(t, byte(0x67), sps[0], "NAL header of an SPS")
	require.Equal(t, byte(66), sps[1], "Baseline profile")
	r := &bitReader{b: unescape(sps[4:])}
	require.Equal(t, 0, r.ue()) // sps id
	_ = r.ue()                  // log2_max_frame_num_minus4
	require.Equal(t, 2, r.ue()) // poc type
	_ = r.ue()                  // max_num_ref_frames
	_ = r.u(1)                  // gaps
	wmb, hmb := r.ue()+1, r.ue()+1
	require.Equal(t, 1, r.u(1)) // frame_mbs_only
	_ = r.u(1)
	w, h = wmb*16, hmb*16
	if r.u(1) == 1 {
		l, rr, tp, b := r.ue(), r.ue(), r.ue(), r.ue()
		w -= 2 * (l + rr)
		h -= 2 * (tp + b)
	}
	return w, h
}

func TestVideoGeneratorWritesAWellFormedMP4(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size, seconds string
		fps           int
		wantFrames    int
	}{
		{"1280x720", "4", 24, 96},
		{"720x1280", "8", 24, 192},
		{"1920x1080", "1.5", 30, 45},
		{"322x180", "2", 25, 50},
	}
	for _, tc := range tests {
		t.Run(tc.size+"_"+tc.seconds, func(t *testing.T) {
			t.Parallel()
			g := demo.NewVideoGenerator(demo.WithVideoDuration(0), demo.WithVideoFPS(tc.fps))
			res := generateVideo(t, g, videoTask("a red kite", tc.size, tc.seconds))
			require.Equal(t, "video/mp4", res.Video.ContentType)
			var w, h int
			_, err := fmt.Sscanf(tc.size, "%dx%d", &w, &h)
			require.NoError(t, err)
			require.Equal(t, videos.Metadata{
				Duration: float64(tc.wantFrames) / float64(tc.fps),
				Width:    w, Height: h, FPS: tc.fps, Seed: res.Metadata.Seed,
			}, res.Metadata)

			file := res.Video.Data
			top := parseBoxes(t, file, 0)
			require.Equal(t, []string{"ftyp", "moov", "mdat"}, []string{top[0].typ, top[1].typ, top[2].typ})
			require.Equal(t, "isom", string(top[0].payload[:4]))

			mvhd := child(t, top, "moov", "mvhd").payload
			require.Equal(t, 1000, be32(mvhd, 12), "movie timescale")
			require.InDelta(t, res.Metadata.Duration*1000, be32(mvhd, 16), 1, "movie duration")

			tkhd := child(t, top, "moov", "trak", "tkhd").payload
			require.Equal(t, w, be32(tkhd, 76)>>16)
			require.Equal(t, h, be32(tkhd, 80)>>16)

			mdhd := child(t, top, "moov", "trak", "mdia", "mdhd").payload
			timescale, duration := be32(mdhd, 12), be32(mdhd, 16)
			require.Equal(t, res.Metadata.Duration, float64(duration)/float64(timescale))
			require.Equal(t, "vide", string(child(t, top, "moov", "trak", "mdia", "hdlr").payload[8:12]))

			stbl := []string{"moov", "trak", "mdia", "minf", "stbl"}
			stts := child(t, top, append(stbl, "stts")...).payload
			require.Equal(t, 1, be32(stts, 4))
			require.Equal(t, tc.wantFrames, be32(stts, 8))
			require.Equal(t, timescale/tc.fps, be32(stts, 12), "sample delta is one frame")

			stss := child(t, top, append(stbl, "stss")...).payload
			require.Equal(t, (tc.wantFrames+tc.fps-1)/tc.fps, be32(stss, 4), "one key frame per second")
			require.Equal(t, 1, be32(stss, 8))

			stsz := child(t, top, append(stbl, "stsz")...).payload
			require.Equal(t, tc.wantFrames, be32(stsz, 8))
			total := 0
			for i := range tc.wantFrames {
				total += be32(stsz, 12+4*i)
			}
			stco := child(t, top, append(stbl, "stco")...).payload
			require.Equal(t, top[2].offset, be32(stco, 8), "the chunk starts the mdat payload")
			require.Equal(t, total, len(top[2].payload), "the samples fill mdat")

			// Every sample is NAL units with 4-byte lengths that add up.
			data := top[2].payload
			for i := range tc.wantFrames {
				size := be32(stsz, 12+4*i)
				sample := data[:size]
				data = data[size:]
				n := be32(sample, 0)
				require.Equal(t, size, 4+n, "sample %d holds one NAL unit", i)
				wantType := byte(1)
				if i%tc.fps == 0 {
					wantType = 5
				}
				require.Equal(t, wantType, sample[4]&0x1f, "sample %d NAL type", i)
			}

			avcC := child(t, top, append(stbl, "stsd", "avc1", "avcC")...).payload
			require.Equal(t, byte(1), avcC[0])
			spsLen := int(binary.BigEndian.Uint16(avcC[6:]))
			gotW, gotH := spsSize(t, avcC[8:8+spsLen])
			require.Equal(t, w, gotW, "SPS width")
			require.Equal(t, h, gotH, "SPS height")
			ppsLen := int(binary.BigEndian.Uint16(avcC[9+spsLen:]))
			require.Equal(t, byte(0x68), avcC[11+spsLen], "PPS NAL header")
			require.Len(t, avcC, 11+spsLen+ppsLen)
		})
	}
}

func TestVideoGeneratorThumbnailIsAPNGOfTheFirstFrame(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0))
	for size, want := range map[string][2]int{"1280x720": {640, 360}, "720x1280": {640, 1137}, "320x240": {320, 240}} {
		res := generateVideo(t, g, videoTask("a lighthouse", size, "4"))
		require.Equal(t, "image/png", res.Thumbnail.ContentType)
		img, err := png.Decode(bytes.NewReader(res.Thumbnail.Data))
		require.NoError(t, err, size)
		require.Equal(t, want[0], img.Bounds().Dx(), size)
		require.Equal(t, want[1], img.Bounds().Dy(), size)
		r1, g1, b1, _ := img.At(0, 0).RGBA()
		r2, g2, b2, _ := img.At(want[0]-1, want[1]-1).RGBA()
		require.Equal(t, [3]uint32{r1, g1, b1}, [3]uint32{r2, g2, b2}, "one flat colour")
	}
}

func TestVideoGeneratorIsDeterministic(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0))
	a := generateVideo(t, g, videoTask("same prompt", "1280x720", "4"))
	b := generateVideo(t, g, videoTask("same prompt", "1280x720", "4"))
	c := generateVideo(t, g, videoTask("other prompt", "1280x720", "4"))
	require.Equal(t, a.Video.Data, b.Video.Data)
	require.Equal(t, a.Thumbnail.Data, b.Thumbnail.Data)
	require.Equal(t, *a.Metadata.Seed, *b.Metadata.Seed)
	require.NotEqual(t, a.Video.Data, c.Video.Data)
	require.NotEqual(t, *a.Metadata.Seed, *c.Metadata.Seed)
}

func TestVideoGeneratorDefaultsTo4SecondsOf1280x720(t *testing.T) {
	t.Parallel()
	res := generateVideo(t, demo.NewVideoGenerator(demo.WithVideoDuration(0)), videoTask("x", "", ""))
	require.Equal(t, 1280, res.Metadata.Width)
	require.Equal(t, 720, res.Metadata.Height)
	require.Equal(t, 4.0, res.Metadata.Duration)
	require.Equal(t, 24, res.Metadata.FPS)
}

func TestVideoGeneratorReportsRisingProgress(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0), demo.WithVideoProgressSteps(4))
	var got []int
	_, err := g.Generate(context.Background(), videoTask("x", "640x360", "4"), func(p int) { got = append(got, p) })
	require.NoError(t, err)
	require.Equal(t, []int{20, 40, 60, 80}, got)
}

func TestVideoGeneratorFailsPromptsWithTheFailMarker(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0), demo.WithVideoProgressSteps(4))
	var got []int
	_, err := g.Generate(context.Background(), videoTask("please #fail now", "640x360", "4"), func(p int) { got = append(got, p) })
	var f *videos.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, videos.CodeGenerationFailed, f.Code)
	require.Contains(t, f.Message, "#fail")
	require.Equal(t, []int{20, 40}, got, "fails halfway")
}

func TestVideoGeneratorRefusesWhatItCannotMake(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0))
	for _, tc := range []struct{ size, seconds, want string }{
		{"641x360", "4", "only even sizes"},
		{"7680x4320", "4", "at most 8294400 pixels"},
		{"1280x720", "61", "at most 60 seconds"},
		{"big", "4", "cannot read the size"},
		{"1280x720", "soon", "cannot read the duration"},
	} {
		_, err := g.Generate(context.Background(), videoTask("x", tc.size, tc.seconds), func(int) {})
		var f *videos.Failure
		require.ErrorAs(t, err, &f, tc.size)
		require.Equal(t, videos.CodeGenerationFailed, f.Code)
		require.Contains(t, f.Message, tc.want)
	}
}

func TestVideoGeneratorStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	g := demo.NewVideoGenerator(demo.WithVideoDuration(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Generate(ctx, videoTask("x", "640x360", "4"), func(int) {})
	require.ErrorIs(t, err, context.Canceled)
}

func TestVideoModelsAreValid(t *testing.T) {
	t.Parallel()
	list := demo.VideoModels()
	require.NoError(t, models.ValidateModels(list))
	for _, m := range list {
		require.True(t, m.Supports(models.CompatVideo), m.ID)
	}
}

// TestVideoMP4DecodesWithFFmpeg decodes the clip with ffprobe and ffmpeg
// when they are installed (with GATEWAYKIT_FFMPEG_TESTS set, as .ci/run
// sets it, it fails without them), and checks what a player sees: codec, size,
// frame rate, duration, frame count, and the colour of each second.
func TestVideoMP4DecodesWithFFmpeg(t *testing.T) {
	t.Parallel()
	ffprobe, err1 := exec.LookPath("ffprobe")
	ffmpeg, err2 := exec.LookPath("ffmpeg")
	switch {
	case (err1 != nil || err2 != nil) && os.Getenv("GATEWAYKIT_FFMPEG_TESTS") != "":
		t.Fatal("GATEWAYKIT_FFMPEG_TESTS is set, but ffprobe or ffmpeg is missing (Debian: apt-get install ffmpeg)")
	case err1 != nil || err2 != nil:
		t.Skip("ffprobe and ffmpeg are not installed (Debian: apt-get install ffmpeg; .ci/run installs them)")
	}
	g := demo.NewVideoGenerator(demo.WithVideoDuration(0))
	res := generateVideo(t, g, videoTask("a decodable clip", "1920x1080", "3"))
	path := filepath.Join(t.TempDir(), "clip.mp4")
	require.NoError(t, os.WriteFile(path, res.Video.Data, 0o644))

	out, err := exec.Command(ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,profile,width,height,pix_fmt,r_frame_rate,duration,nb_read_frames",
		"-of", "default=noprint_wrappers=1", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{"codec_name=h264", "profile=Constrained Baseline", "width=1920", "height=1080",
		"pix_fmt=yuv420p", "r_frame_rate=24/1", "duration=3.000000", "nb_read_frames=72"} {
		require.Contains(t, string(out), want)
	}

	// One frame from each second, as raw yuv420p: every pixel the same.
	for sec := range 3 {
		raw, err := exec.Command(ffmpeg, "-v", "error", "-ss", fmt.Sprint(float64(sec)+0.5), "-i", path,
			"-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-").Output()
		require.NoError(t, err)
		require.Len(t, raw, 1920*1080*3/2)
		ySize := 1920 * 1080
		for _, plane := range [][]byte{raw[:ySize], raw[ySize : ySize+ySize/4], raw[ySize+ySize/4:]} {
			require.Equal(t, bytes.Repeat(plane[:1], len(plane)), plane, "second %d is one flat colour", sec)
		}
	}
	errOut, err := exec.Command(ffmpeg, "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(errOut)), "decoder warnings")
}

func TestVideoGeneratorStartsWithTheReferenceImagesColour(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = []byte{200, 40, 10, 255}[i%4]
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	task := videoTask("x", "320x240", "2")
	task.Request.Create.InputReference = &videos.InputReference{ImageURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())}
	res := generateVideo(t, demo.NewVideoGenerator(demo.WithVideoDuration(0)), task)
	thumb, err := png.Decode(bytes.NewReader(res.Thumbnail.Data))
	require.NoError(t, err)
	r, g, b, _ := thumb.At(0, 0).RGBA()
	require.Equal(t, [3]uint32{200, 40, 10}, [3]uint32{r >> 8, g >> 8, b >> 8})
	plain := generateVideo(t, demo.NewVideoGenerator(demo.WithVideoDuration(0)), videoTask("x", "320x240", "2"))
	require.NotEqual(t, plain.Video.Data, res.Video.Data)
}
