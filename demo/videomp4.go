package demo

import (
	"encoding/binary"
	"fmt"
	"image/color"
	"math"
	"math/bits"
)

// This file writes a small but real MP4: one H.264 video track that any
// player decodes (Constrained Baseline profile, CAVLC). Every frame is a
// single flat colour, which lets the encoder be tiny and exact:
//
//   - a colour change is an IDR picture whose macroblocks are all
//     Intra16x16 with DC prediction: the first one carries the colour as
//     one DC coefficient per plane, the others predict it from their
//     neighbours and carry nothing (one byte each);
//   - the frames in between are P pictures whose macroblocks are all
//     P_Skip, which copy the previous frame (a few bytes each).
//
// At QP 22 the quantisation is exact: a luma DC level of 2d reconstructs
// a residual of exactly d, and a chroma DC level of d a residual of d
// (spec H.264 §8.5.10 and §8.5.11), so the decoded colour is the encoded
// one to the unit.

// mp4Video describes the clip to write.
type mp4Video struct {
	width, height int
	fps           int
	frames        int
	// colours holds one colour per second of video, in the limited-range
	// BT.601 Y'CbCr that H.264 decoders assume.
	colours []color.YCbCr
}

const (
	h264QP            = 22 // pic_init_qp; see the comment at the top
	log2MaxFrameNum   = 8  // frame_num counts P frames within one second
	maxDemoMacroblock = 36864
)

// writeMP4 returns the bytes of the MP4 file.
func writeMP4(v mp4Video) []byte {
	sps, pps := h264SPS(v), h264PPS()
	mbs := ((v.width + 15) / 16) * ((v.height + 15) / 16)

	var (
		samples [][]byte
		sync    []uint32
		frameNo int
		idrID   uint32
	)
	for i := range v.frames {
		second := i / v.fps
		if i%v.fps == 0 {
			c := v.colours[min(second, len(v.colours)-1)]
			samples = append(samples, lengthPrefixed(h264IDR(mbs, c, idrID)))
			sync = append(sync, uint32(i+1))
			idrID ^= 1
			frameNo = 0
			continue
		}
		frameNo++
		samples = append(samples, lengthPrefixed(h264PSkip(mbs, frameNo%(1<<log2MaxFrameNum))))
	}

	timescale := uint32(v.fps * 1000)
	const delta = 1000
	mediaDuration := uint32(v.frames * delta)
	movieDuration := uint32(math.Round(float64(v.frames) * 1000 / float64(v.fps)))

	ftyp := mp4Box("ftyp", []byte("isom"), u32(0x200), []byte("isomiso2avc1mp41"))

	buildMoov := func(mdatOffset uint32) []byte {
		sizes := make([]byte, 0, 4*len(samples))
		for _, s := range samples {
			sizes = binary.BigEndian.AppendUint32(sizes, uint32(len(s)))
		}
		stss := u32(uint32(len(sync)))
		for _, n := range sync {
			stss = binary.BigEndian.AppendUint32(stss, n)
		}
		stbl := mp4Box("stbl",
			fullBox("stsd", 0, 0, u32(1), avc1Entry(v, sps, pps)),
			fullBox("stts", 0, 0, u32(1), u32(uint32(v.frames)), u32(delta)),
			fullBox("stss", 0, 0, stss),
			fullBox("stsc", 0, 0, u32(1), u32(1), u32(uint32(v.frames)), u32(1)),
			fullBox("stsz", 0, 0, u32(0), u32(uint32(len(samples))), sizes),
			fullBox("stco", 0, 0, u32(1), u32(mdatOffset)),
		)
		minf := mp4Box("minf",
			fullBox("vmhd", 0, 1, make([]byte, 8)),
			mp4Box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1))),
			stbl,
		)
		mdia := mp4Box("mdia",
			fullBox("mdhd", 0, 0, u32(0), u32(0), u32(timescale), u32(mediaDuration), u16(0x55c4), u16(0)), // language "und"
			fullBox("hdlr", 0, 0, u32(0), []byte("vide"), make([]byte, 12), []byte("VideoHandler\x00")),
			minf,
		)
		tkhd := fullBox("tkhd", 0, 3,
			u32(0), u32(0), u32(1), u32(0), u32(movieDuration),
			make([]byte, 8), u16(0), u16(0), u16(0), u16(0),
			unityMatrix(), u32(uint32(v.width)<<16), u32(uint32(v.height)<<16))
		mvhd := fullBox("mvhd", 0, 0,
			u32(0), u32(0), u32(1000), u32(movieDuration),
			u32(0x00010000), u16(0x0100), make([]byte, 10),
			unityMatrix(), make([]byte, 24), u32(2))
		return mp4Box("moov", mvhd, mp4Box("trak", tkhd, mdia))
	}
	// The moov box comes first ("fast start"); its size does not depend
	// on the offset it records.
	moovLen := len(buildMoov(0))
	mdatOffset := uint32(len(ftyp) + moovLen + 8)
	moov := buildMoov(mdatOffset)

	out := make([]byte, 0, int(mdatOffset)+totalLen(samples))
	out = append(out, ftyp...)
	out = append(out, moov...)
	out = binary.BigEndian.AppendUint32(out, uint32(8+totalLen(samples)))
	out = append(out, "mdat"...)
	for _, s := range samples {
		out = append(out, s...)
	}
	return out
}

func totalLen(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	return n
}

func avc1Entry(v mp4Video, sps, pps []byte) []byte {
	avcC := mp4Box("avcC",
		[]byte{1, sps[1], sps[2], sps[3], 0xff, 0xe1},
		u16(uint16(len(sps))), sps,
		[]byte{1}, u16(uint16(len(pps))), pps)
	compressor := make([]byte, 32)
	name := "gatewaykit demo"
	compressor[0] = byte(len(name))
	copy(compressor[1:], name)
	return mp4Box("avc1",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 16), // pre_defined, reserved
		u16(uint16(v.width)), u16(uint16(v.height)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1),
		compressor, u16(0x0018), u16(0xffff),
		avcC)
}

func mp4Box(typ string, payload ...[]byte) []byte {
	n := 8
	for _, p := range payload {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, typ...)
	for _, p := range payload {
		b = append(b, p...)
	}
	return b
}

func fullBox(typ string, version byte, flags uint32, payload ...[]byte) []byte {
	head := []byte{version, byte(flags >> 16), byte(flags >> 8), byte(flags)}
	return mp4Box(typ, append([][]byte{head}, payload...)...)
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func unityMatrix() []byte {
	var b []byte
	for _, v := range []uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

func lengthPrefixed(nal []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(nal)), uint32(len(nal))), nal...)
}

// ---- H.264 ----

// bitWriter writes an RBSP bit by bit.
type bitWriter struct {
	buf  []byte
	cur  byte
	nbit uint
}

func (w *bitWriter) u(n int, v uint64) {
	for i := n - 1; i >= 0; i-- {
		w.cur = w.cur<<1 | byte(v>>uint(i)&1)
		w.nbit++
		if w.nbit == 8 {
			w.buf = append(w.buf, w.cur)
			w.cur, w.nbit = 0, 0
		}
	}
}

func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// ue writes an unsigned Exp-Golomb code.
func (w *bitWriter) ue(v uint32) {
	x := uint64(v) + 1
	n := bits.Len64(x)
	w.u(n-1, 0)
	w.u(n, x)
}

// se writes a signed Exp-Golomb code.
func (w *bitWriter) se(v int32) {
	if v > 0 {
		w.ue(uint32(2*v - 1))
	} else {
		w.ue(uint32(-2 * v))
	}
}

// trailing writes rbsp_trailing_bits and returns the RBSP.
func (w *bitWriter) trailing() []byte {
	w.u(1, 1)
	for w.nbit != 0 {
		w.u(1, 0)
	}
	return w.buf
}

// nal wraps an RBSP in a NAL unit, inserting emulation prevention bytes.
func nal(refIdc, typ byte, rbsp []byte) []byte {
	out := make([]byte, 0, len(rbsp)+len(rbsp)/64+1)
	out = append(out, refIdc<<5|typ)
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// h264Level returns level_idc for the picture size and frame rate (Table
// MaxFS and MaxMBPS).
func h264Level(mbs, fps int) byte {
	levels := []struct {
		idc          byte
		maxFS, maxMB int
	}{
		{30, 1620, 40500}, {31, 3600, 108000}, {32, 5120, 216000},
		{40, 8192, 245760}, {42, 8704, 522240}, {50, 22080, 589824},
		{51, 36864, 983040}, {52, 36864, 2073600},
	}
	for _, l := range levels {
		if mbs <= l.maxFS && mbs*fps <= l.maxMB {
			return l.idc
		}
	}
	return 52
}

func h264SPS(v mp4Video) []byte {
	wmb, hmb := (v.width+15)/16, (v.height+15)/16
	var w bitWriter
	w.u(8, 66)         // profile_idc: Baseline
	w.u(8, 0b11000000) // constraint_set0 and 1: Constrained Baseline
	w.u(8, uint64(h264Level(wmb*hmb, v.fps)))
	w.ue(0)                   // seq_parameter_set_id
	w.ue(log2MaxFrameNum - 4) // log2_max_frame_num_minus4
	w.ue(2)                   // pic_order_cnt_type: from frame_num
	w.ue(1)                   // max_num_ref_frames
	w.flag(false)             // gaps_in_frame_num_value_allowed_flag
	w.ue(uint32(wmb - 1))     // pic_width_in_mbs_minus1
	w.ue(uint32(hmb - 1))     // pic_height_in_map_units_minus1
	w.flag(true)              // frame_mbs_only_flag
	w.flag(true)              // direct_8x8_inference_flag
	cropR, cropB := (wmb*16-v.width)/2, (hmb*16-v.height)/2
	w.flag(cropR != 0 || cropB != 0) // frame_cropping_flag
	if cropR != 0 || cropB != 0 {
		w.ue(0)
		w.ue(uint32(cropR))
		w.ue(0)
		w.ue(uint32(cropB))
	}
	w.flag(true)             // vui_parameters_present_flag
	w.flag(false)            // aspect_ratio_info_present_flag
	w.flag(false)            // overscan_info_present_flag
	w.flag(false)            // video_signal_type_present_flag
	w.flag(false)            // chroma_loc_info_present_flag
	w.flag(true)             // timing_info_present_flag
	w.u(32, 1)               // num_units_in_tick
	w.u(32, uint64(2*v.fps)) // time_scale: two ticks per frame
	w.flag(true)             // fixed_frame_rate_flag
	w.flag(false)            // nal_hrd_parameters_present_flag
	w.flag(false)            // vcl_hrd_parameters_present_flag
	w.flag(false)            // pic_struct_present_flag
	w.flag(true)             // bitstream_restriction_flag
	w.flag(true)             // motion_vectors_over_pic_boundaries_flag
	w.ue(0)                  // max_bytes_per_pic_denom
	w.ue(0)                  // max_bits_per_mb_denom
	w.ue(16)                 // log2_max_mv_length_horizontal
	w.ue(16)                 // log2_max_mv_length_vertical
	w.ue(0)                  // max_num_reorder_frames
	w.ue(1)                  // max_dec_frame_buffering
	return nal(3, 7, w.trailing())
}

func h264PPS() []byte {
	var w bitWriter
	w.ue(0)           // pic_parameter_set_id
	w.ue(0)           // seq_parameter_set_id
	w.flag(false)     // entropy_coding_mode_flag: CAVLC
	w.flag(false)     // bottom_field_pic_order_in_frame_present_flag
	w.ue(0)           // num_slice_groups_minus1
	w.ue(0)           // num_ref_idx_l0_default_active_minus1
	w.ue(0)           // num_ref_idx_l1_default_active_minus1
	w.flag(false)     // weighted_pred_flag
	w.u(2, 0)         // weighted_bipred_idc
	w.se(h264QP - 26) // pic_init_qp_minus26
	w.se(0)           // pic_init_qs_minus26
	w.se(0)           // chroma_qp_index_offset
	w.flag(true)      // deblocking_filter_control_present_flag
	w.flag(false)     // constrained_intra_pred_flag
	w.flag(false)     // redundant_pic_cnt_present_flag
	return nal(3, 8, w.trailing())
}

// sliceHeader writes the header of a picture's only slice.
func sliceHeader(w *bitWriter, idr bool, frameNum int, idrID uint32) {
	w.ue(0) // first_mb_in_slice
	if idr {
		w.ue(7) // slice_type: I (all slices)
	} else {
		w.ue(5) // slice_type: P (all slices)
	}
	w.ue(0) // pic_parameter_set_id
	w.u(log2MaxFrameNum, uint64(frameNum))
	if idr {
		w.ue(idrID)   // idr_pic_id
		w.flag(false) // no_output_of_prior_pics_flag  (dec_ref_pic_marking)
		w.flag(false) // long_term_reference_flag
	} else {
		w.flag(false) // num_ref_idx_active_override_flag
		w.flag(false) // ref_pic_list_modification_flag_l0
		w.flag(false) // adaptive_ref_pic_marking_mode_flag
	}
	w.se(0) // slice_qp_delta
	w.ue(1) // disable_deblocking_filter_idc: off
}

// h264IDR returns an IDR picture of one flat colour.
func h264IDR(mbs int, c color.YCbCr, idrID uint32) []byte {
	var w bitWriter
	sliceHeader(&w, true, 0, idrID)
	// With nothing to predict from, the first macroblock predicts 128 in
	// every plane; its DC coefficients carry the difference.
	luma := 2 * (int(c.Y) - 128)
	cb, cr := int(c.Cb)-128, int(c.Cr)-128
	chromaCBP := 0
	if cb != 0 || cr != 0 {
		chromaCBP = 1
	}
	for i := range mbs {
		if i > 0 {
			// I_16x16, DC prediction, no coefficients: "00100 1 1 1".
			w.ue(3)
			w.ue(0)
			w.se(0)
			w.u(1, 1) // Intra16x16DCLevel coeff_token: none
			continue
		}
		w.ue(uint32(1 + 2 + 4*chromaCBP)) // mb_type I_16x16_2_<cbp>_0
		w.ue(0)                           // intra_chroma_pred_mode: DC
		w.se(0)                           // mb_qp_delta
		writeDC(&w, luma, false)
		if chromaCBP != 0 {
			writeDC(&w, cb, true)
			writeDC(&w, cr, true)
		}
	}
	return nal(3, 5, w.trailing())
}

// writeDC writes a residual block (CAVLC) whose only non-zero coefficient
// is the first one, level; chroma selects the 2x2 chroma DC tables, else
// those of a 4x4 block with nC = 0.
func writeDC(w *bitWriter, level int, chroma bool) {
	if level == 0 {
		if chroma {
			w.u(2, 0b01)
		} else {
			w.u(1, 1)
		}
		return
	}
	abs := level
	if abs < 0 {
		abs = -abs
	}
	if abs == 1 { // one trailing one
		if chroma {
			w.u(1, 1)
		} else {
			w.u(2, 0b01)
		}
		w.flag(level < 0) // trailing_ones_sign_flag
	} else {
		if chroma {
			w.u(6, 0b000111)
		} else {
			w.u(6, 0b000101)
		}
		code := 2*level - 2
		if level < 0 {
			code = -2*level - 1
		}
		code -= 2 // the first level after fewer than three trailing ones
		switch {
		case code < 14:
			w.u(code+1, 1) // level_prefix = code
		case code < 30:
			w.u(15, 1) // level_prefix = 14
			w.u(4, uint64(code-14))
		default:
			w.u(16, 1) // level_prefix = 15
			w.u(12, uint64(code-30))
		}
	}
	w.u(1, 1) // total_zeros = 0
}

// h264PSkip returns a P picture in which every macroblock is skipped: a
// copy of the previous frame.
func h264PSkip(mbs, frameNum int) []byte {
	var w bitWriter
	sliceHeader(&w, false, frameNum, 0)
	w.ue(uint32(mbs)) // mb_skip_run
	return nal(2, 1, w.trailing())
}

// studioYCbCr converts an sRGB colour to limited-range BT.601 Y'CbCr.
func studioYCbCr(r, g, b uint8) color.YCbCr {
	R, G, B := int(r), int(g), int(b)
	y := (66*R+129*G+25*B+128)>>8 + 16
	cb := (-38*R-74*G+112*B+128)>>8 + 128
	cr := (112*R-94*G-18*B+128)>>8 + 128
	return color.YCbCr{Y: uint8(y), Cb: uint8(cb), Cr: uint8(cr)}
}

func (v mp4Video) String() string {
	return fmt.Sprintf("%dx%d@%d %d frames", v.width, v.height, v.fps, v.frames)
}
