//! Security helpers (issue 4): the rules, in pure Rust (unit-tested and fuzzed, no napi). Each
//! topic has one file here and its JS wrapper of the same name in `src/binding/helpers/`.

pub mod api_key;
pub mod csp;
pub mod otp_store;
pub mod password;
pub mod sanitize_filename;
pub mod sanitize_html;
pub mod sql_interval;
pub mod timing;
pub mod totp;

#[cfg(test)]
mod layout_tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    fn rust_files(dir: &str) -> BTreeSet<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("readable dir entry").file_name())
            .filter_map(|name| name.to_str()?.strip_suffix(".rs").map(str::to_owned))
            .filter(|name| name != "mod")
            .collect()
    }

    #[test]
    fn helper_logic_is_free_of_napi() {
        for topic in rust_files("src/helpers") {
            let path = format!("{}/src/helpers/{topic}.rs", env!("CARGO_MANIFEST_DIR"));
            let source = std::fs::read_to_string(&path).expect("readable source");
            let code: String = source
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            assert!(
                !code.contains("napi"),
                "{path} uses napi: wrappers belong in src/binding/helpers/"
            );
        }
    }

    #[test]
    fn every_topic_has_one_wrapper_of_the_same_name() {
        assert_eq!(rust_files("src/helpers"), rust_files("src/binding/helpers"));
    }
}
