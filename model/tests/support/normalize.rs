//! Reply bodies as normalised text: zxids relative to the script's start, session ids by
//! order of creation, times left out, children and names sorted.

use zkrs_codec::{
    jute::Reader, Decode, GetAclResponse, List, MultiHeader, MultiItem, MultiOpResult, Stat,
};

use super::runner::{sorted, Expect, Run};

impl Run {
    pub(super) fn body(&mut self, expect: Expect, body: &[u8]) -> String {
        let mut r = Reader::new(body);
        match expect {
            Expect::Empty => format!("{body:?}"),
            Expect::Path => {
                let p = r.read_str().unwrap_or("?").to_owned();
                self.note_created(&p);
                p
            }
            Expect::PathStat => {
                let p = r.read_str().unwrap_or("?").to_owned();
                self.note_created(&p);
                let s = Stat::decode(&mut r).unwrap_or_default();
                format!("{p} {}", self.stat(&s))
            }
            Expect::Stat => self.stat(&Stat::decode(&mut r).unwrap_or_default()),
            Expect::DataStat => {
                let d = r.read_buffer_opt().ok().flatten();
                let s = Stat::decode(&mut r).unwrap_or_default();
                format!("{} {}", shown(d), self.stat(&s))
            }
            Expect::Children(with_stat) => {
                let names = List::<&str>::decode(&mut r)
                    .map(|l| sorted(l.iter()))
                    .unwrap_or_default();
                if with_stat {
                    let s = Stat::decode(&mut r).unwrap_or_default();
                    format!("{names:?} {}", self.stat(&s))
                } else {
                    format!("{names:?}")
                }
            }
            Expect::Acl => match GetAclResponse::decode(&mut r) {
                Ok(a) => {
                    let acl: Vec<String> = a
                        .acl
                        .iter()
                        .map(|e| format!("{}:{}:{}", e.perms.0, e.id.scheme, e.id.id))
                        .collect();
                    format!("{acl:?} {}", self.stat(&a.stat))
                }
                Err(e) => format!("undecodable {e}"),
            },
            Expect::Int => r.read_i32().map_or("?".into(), |n| n.to_string()),
            Expect::Names => List::<&str>::decode(&mut r)
                .map(|l| format!("{:?}", sorted(l.iter())))
                .unwrap_or_default(),
            Expect::WhoAmI => {
                let n = r.read_i32().unwrap_or(0);
                let mut out = Vec::new();
                for _ in 0..n {
                    let scheme = r.read_str().unwrap_or("?");
                    let user = r.read_str().unwrap_or("?");
                    out.push(format!("{scheme}:{user}"));
                }
                format!("{out:?}")
            }
            Expect::Multi => {
                let mut out = Vec::new();
                loop {
                    let Ok(header) = MultiHeader::decode(&mut r) else {
                        out.push("undecodable".to_owned());
                        break;
                    };
                    if header.done {
                        break;
                    }
                    match MultiOpResult::decode_body(header, &mut r) {
                        Ok(MultiOpResult::Create(p)) => {
                            self.note_created(p);
                            out.push(format!("create {p}"));
                        }
                        Ok(MultiOpResult::Create2 { op, response }) => {
                            self.note_created(response.path);
                            out.push(format!(
                                "{op} {} {}",
                                response.path,
                                self.stat(&response.stat)
                            ));
                        }
                        Ok(MultiOpResult::SetData(s)) => {
                            out.push(format!("setData {}", self.stat(&s)))
                        }
                        Ok(MultiOpResult::GetData { data, stat }) => {
                            out.push(format!("getData {} {}", shown(data), self.stat(&stat)))
                        }
                        Ok(MultiOpResult::GetChildren(l)) => {
                            out.push(format!("getChildren {:?}", sorted(l.iter())))
                        }
                        Ok(other) => out.push(format!("{other:?}")),
                        Err(e) => out.push(format!("undecodable {e}")),
                    }
                }
                out.join("; ")
            }
        }
    }
}

/// Data as text: `None` for null data, `Some("..")` otherwise; a large value by its length and
/// a checksum (a difference must not print a megabyte).
fn shown(data: Option<&[u8]>) -> String {
    match data {
        Some(d) if d.len() > 64 => {
            let sum = d
                .iter()
                .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(*b)));
            format!("Some(<{} bytes, sum {sum:x}>)", d.len())
        }
        d => format!("{:?}", d.map(String::from_utf8_lossy)),
    }
}
