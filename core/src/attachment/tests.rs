use super::*;

/// A PNG's signature and IHDR chunk for a `w`×`h` image (enough for the header; no pixels).
pub(crate) fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    b
}

fn jpeg_header(w: u16, h: u16) -> Vec<u8> {
    let mut b = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, b'J', b'F', 0xff, 0xc0, 0x00, 0x11, 0x08];
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    b
}

#[test]
fn image_headers_give_type_and_pixel_size() {
    assert_eq!(image_size(&png_header(64, 48)), Some(("image/png", 64, 48)));
    assert_eq!(image_size(&jpeg_header(640, 480)), Some(("image/jpeg", 640, 480)));
    assert_eq!(image_size(b"GIF89a\x20\x00\x10\x00rest"), Some(("image/gif", 32, 16)));
    let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
    webp.extend_from_slice(&[0x3f, 0x01, 0x00, 0xc7, 0x00, 0x00]); // 320 × 200 (minus one, 24-bit LE)
    assert_eq!(image_size(&webp), Some(("image/webp", 320, 200)));
    let mut lossless = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
    let bits: u32 = 99 | (49 << 14); // 100 × 50
    lossless.extend_from_slice(&bits.to_le_bytes());
    assert_eq!(image_size(&lossless), Some(("image/webp", 100, 50)));
}

#[test]
fn a_corrupt_image_is_a_file_and_svg_is_never_an_image() {
    let corrupt = &png_header(64, 48)[..14];
    let (kind, mime, size) = classify("shot.png", "image/png", corrupt);
    assert_eq!((kind, mime.as_str(), size), (AttachmentKind::File, "image/png", None));
    assert_eq!(image_size(&png_header(0, 48)), None, "a zero-sized image is not readable");
    assert_eq!(image_size(&[0xff, 0xd8, 0xff]), None, "a truncated JPEG");
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#;
    assert_eq!(classify("logo.svg", "image/svg+xml", svg).0, AttachmentKind::File);
    assert_eq!(classify("logo.svg", "", svg).0, AttachmentKind::File);
}

#[test]
fn text_like_files_by_type_and_extension() {
    let cases = [
        ("script.py", "", AttachmentKind::Text),
        ("data.csv", "text/csv", AttachmentKind::Text),
        ("notes", "text/plain", AttachmentKind::Text),
        ("config.json", "application/json", AttachmentKind::Text),
        ("Makefile", "", AttachmentKind::Text),
        ("server.log", "application/octet-stream", AttachmentKind::Text),
        ("report.pdf", "application/pdf", AttachmentKind::File),
        ("blob.bin", "", AttachmentKind::File),
    ];
    for (name, mime, want) in cases {
        assert_eq!(classify(name, mime, b"print('hi')\n").0, want, "{name} ({mime})");
    }
    assert_eq!(classify("main.rs", "", &[0x66, 0, 0x67]).0, AttachmentKind::File, "a NUL byte: binary");
    assert_eq!(classify("main.rs", "", &[0xc3, 0x28]).0, AttachmentKind::File, "not UTF-8");
    assert_eq!(classify("main.rs", "", b"fn main() {}").1, "text/plain", "a type for an untyped text");
}

#[test]
fn display_names_are_safe_to_show() {
    assert_eq!(display_name("C:\\Users\\me\\Desktop\\report.pdf"), "report.pdf");
    assert_eq!(display_name("../../etc/passwd"), "passwd");
    assert_eq!(display_name("dir/"), "dir");
    assert_eq!(display_name("evil\u{202e}gpj.exe"), "evilgpj.exe");
    assert_eq!(display_name("a\nb\tc\u{0}.txt"), "abc.txt");
    assert_eq!(display_name("  \u{7} "), "attachment");
    let long = format!("{}.py", "x".repeat(500));
    let shown = display_name(&long);
    assert_eq!(shown.chars().count(), DISPLAY_NAME_MAX_CHARS);
    assert!(shown.ends_with("….py"), "{shown}");
}

#[test]
fn examine_hashes_and_describes() {
    let a = NewAttachment::new("dir/shot.png", "", png_header(64, 48)).examine();
    assert_eq!(a.sha256, sha256_hex(&png_header(64, 48)));
    assert!(is_sha256_hex(&a.sha256));
    assert_eq!((a.kind, a.width, a.height, a.mime.as_str()), (AttachmentKind::Image, Some(64), Some(48), "image/png"));
    assert_eq!(a.describe(), "shot.png, 64×48, 33 B, image/png");
    assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(format_size(1229), "1.2 KB");
    assert_eq!(format_size(3 * 1024 * 1024), "3.0 MB");
}

#[test]
fn the_size_limit_names_the_file_and_the_limit() {
    let big = NewAttachment::new("video.mp4", "video/mp4", vec![0u8; 2048]);
    let err = big.check_size(1024).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::AttachmentTooLarge);
    let msg = err.to_string();
    assert!(msg.contains("video.mp4") && msg.contains("1.0 KB") && msg.contains("2.0 KB"), "{msg}");
    assert!(big.check_size(2048).is_ok());
}

#[test]
fn a_known_sha256_is_used_and_a_malformed_one_ignored() {
    let bytes = b"hello".to_vec();
    let real = sha256_hex(&bytes);
    // The worker's WebCrypto digest stands in for hashing in wasm: examine trusts it as given.
    let given = "0".repeat(64);
    let a = NewAttachment::new("a.txt", "text/plain", bytes.clone()).with_sha256(given.clone()).examine();
    assert_eq!(a.sha256, given);
    for bad in ["", "ABC", &real.to_uppercase(), &real[..63]] {
        let a = NewAttachment::new("a.txt", "text/plain", bytes.clone()).with_sha256(bad.to_owned()).examine();
        assert_eq!(a.sha256, real, "{bad:?} is not a lower-case hex SHA-256: the bytes are hashed");
    }
}
