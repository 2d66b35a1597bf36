//! Malformed SPIR-V gets a distinct coded error, never a panic (no GPU needed); so do ids
//! past the module's bound and set numbers past the limit.

use kiln::ShaderModule;

fn valid() -> Vec<u8> {
    include_bytes!(concat!(env!("OUT_DIR"), "/shaders/vector_add.comp.spv")).to_vec()
}

fn code(bytes: &[u8]) -> &'static str {
    match ShaderModule::from_bytes(bytes) {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

fn set_word(bytes: &mut [u8], index: usize, word: u32) {
    bytes[index * 4..index * 4 + 4].copy_from_slice(&word.to_le_bytes());
}

#[test]
fn each_malformation_has_its_own_code() {
    assert_eq!(code(&valid()), "ok");
    assert_eq!(code(&[]), "KILN-E001", "empty");
    assert_eq!(code(&[0x03, 0x02, 0x23]), "KILN-E002", "3 bytes");
    assert_eq!(code(&valid()[..12]), "KILN-E003", "header cut short");

    let mut wrong_magic = valid();
    set_word(&mut wrong_magic, 0, 0xdead_beef);
    assert_eq!(code(&wrong_magic), "KILN-E004", "wrong magic");

    let mut bad_version = valid();
    set_word(&mut bad_version, 1, 0x0002_0000);
    assert_eq!(code(&bad_version), "KILN-E005", "version 2.0");

    let mut bound0 = valid();
    set_word(&mut bound0, 3, 0);
    assert_eq!(code(&bound0), "KILN-E006", "bound 0");

    let mut wc0 = valid();
    let first = u32::from_le_bytes(wc0[20..24].try_into().unwrap());
    set_word(&mut wc0, 5, first & 0xffff); // word count 0, same opcode
    assert_eq!(code(&wc0), "KILN-E007", "word count 0");

    // An instruction that claims 5 words with only its first word present.
    let mut truncated = valid();
    truncated.extend_from_slice(&((5u32 << 16) | 59).to_le_bytes());
    assert_eq!(code(&truncated), "KILN-E008", "truncated instruction");
}

#[test]
fn errors_name_the_byte_offset() {
    let mut wc0 = valid();
    let first = u32::from_le_bytes(wc0[20..24].try_into().unwrap());
    wc0[20..24].copy_from_slice(&(first & 0xffff).to_le_bytes());
    let msg = ShaderModule::from_bytes(&wc0).unwrap_err().to_string();
    assert!(msg.contains("byte offset 20"), "{msg}");
}

#[test]
fn big_endian_modules_are_accepted() {
    let le = valid();
    let be: Vec<u8> = le
        .chunks_exact(4)
        .flat_map(|w| [w[3], w[2], w[1], w[0]])
        .collect();
    let a = ShaderModule::from_bytes(&le).unwrap();
    let b = ShaderModule::from_bytes(&be).unwrap();
    assert_eq!(a.words(), b.words());
}

fn vector_add_words() -> Vec<u32> {
    kiln::include_spirv!("vector_add.comp")
        .unwrap()
        .words()
        .to_vec()
}

#[test]
fn spirv_id_bound_and_set_number_errors() {
    // Bound 2: every id the module uses is out of bound.
    let mut w = vector_add_words();
    w[3] = 2;
    assert_eq!(common::code(ShaderModule::from_spirv(&w)), "KILN-E009");
    // DescriptorSet 64 on every decorated variable: the module reflects, the layout is refused.
    let mut w = vector_add_words();
    let mut i = 5;
    let mut patched = 0;
    while i < w.len() {
        let (count, op) = ((w[i] >> 16) as usize, w[i] & 0xffff);
        // OpDecorate %id DescriptorSet n
        if op == 71 && count == 4 && w[i + 2] == 34 {
            w[i + 3] = 64;
            patched += 1;
        }
        i += count.max(1);
    }
    assert_eq!(patched, 3);
    let m = ShaderModule::from_spirv(&w).unwrap();
    let e = kiln::PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap_err();
    assert_eq!(e.code(), "KILN-E052");
    // A missing file is a read error (KILN-E012), not a parse error (KILN-E010 before).
    let e = ShaderModule::from_file("/nonexistent/kiln/x.spv").unwrap_err();
    assert_eq!(e.code(), "KILN-E012", "{e}");
    assert!(e.to_string().contains("`/nonexistent/kiln/x.spv`"), "{e}");
    assert!(e.to_string().contains("check the path"), "{e}");
    assert!(std::error::Error::source(&e).is_some());
}
