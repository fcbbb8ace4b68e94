//! The client's calls for Curator's compressed data (feature `compression`): the setData and
//! getData of Curator's `compressed()` and `decompressed()`. A create takes
//! [`CreateOptions::compressed`](crate::CreateOptions::compressed), a transaction
//! [`Op::compressed`](crate::Op::compressed).

use bytes::Bytes;
use zkrs_codec::Stat;

use crate::client::Client;
use crate::compression;
use crate::error::Result;

impl Client {
    /// Sets the node's data gzipped, as Curator's `setData().compressed()` does, if it has
    /// `version` (`None`: any); returns the new Stat. The gzipped data must fit the packet
    /// limit (refused with kind `InvalidInput` before anything is sent otherwise).
    pub async fn set_data_compressed(
        &self,
        path: &str,
        data: &[u8],
        version: Option<i32>,
    ) -> Result<Stat> {
        self.set_data(path, &compression::compress(data), version)
            .await
    }

    /// The node's data, gunzipped as Curator's `getData().decompressed()` does, and its Stat.
    /// Fails with kind [`ErrorKind::InvalidData`](crate::ErrorKind::InvalidData) if the data
    /// is not Curator's gzip or would decompress to more than
    /// [`DEFAULT_MAX_DECOMPRESSED_LEN`](compression::DEFAULT_MAX_DECOMPRESSED_LEN) (a larger
    /// limit: [`get_data`](Client::get_data), then
    /// [`decompress_with_limit`](compression::decompress_with_limit)). Data read with a watch
    /// is decompressed with [`compression::decompress`].
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// client.set_data_compressed("/app/config", br#"{"replicas":5}"#, None).await?;
    /// let (data, stat) = client.get_data_decompressed("/app/config").await?;
    /// println!("{} bytes at version {}", data.len(), stat.version);
    /// # Ok(()) }
    /// ```
    pub async fn get_data_decompressed(&self, path: &str) -> Result<(Bytes, Stat)> {
        let (gzipped, stat) = self.get_data(path).await?;
        let data = compression::decompress(&gzipped).map_err(|e| e.with_path(path))?;
        Ok((Bytes::from(data), stat))
    }
}
