// A test KMS client for parquet-java's PropertiesDrivenCryptoFactory.
//
// Same behaviour as parquet-java's test class InMemoryKMS (not shipped in the
// release jars): master keys come from the Hadoop property
// "parquet.encryption.key.list" = "keyA:<base64>, keyB:<base64>", and a key is
// wrapped locally with AES-GCM under the master key, AAD = the master key id
// (UTF-8), via KeyToolkit.encryptKeyLocally / decryptKeyLocally.
//
// Compiled at test time by interop/spark_support.py; never commit .class files.

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.crypto.KeyAccessDeniedException;
import org.apache.parquet.crypto.ParquetCryptoRuntimeException;
import org.apache.parquet.crypto.keytools.KeyToolkit;
import org.apache.parquet.crypto.keytools.KmsClient;

public class PqbloomTestKms implements KmsClient {
  public static final String KEY_LIST_PROPERTY_NAME = "parquet.encryption.key.list";

  private Map<String, byte[]> masterKeys = new HashMap<>();

  @Override
  public synchronized void initialize(Configuration configuration, String kmsInstanceID, String kmsInstanceURL,
      String accessToken) throws KeyAccessDeniedException {
    String[] entries = configuration.getTrimmedStrings(KEY_LIST_PROPERTY_NAME);
    if (entries == null || entries.length == 0) {
      throw new ParquetCryptoRuntimeException("No encryption key list in " + KEY_LIST_PROPERTY_NAME);
    }
    Map<String, byte[]> keys = new HashMap<>();
    for (String entry : entries) {
      String[] parts = entry.split(":");
      String id = parts[0].trim();
      if (parts.length != 2) {
        throw new IllegalArgumentException("Key '" + id + "' is not formatted as id:base64");
      }
      keys.put(id, Base64.getDecoder().decode(parts[1].trim()));
    }
    masterKeys = keys;
  }

  private byte[] masterKey(String id) {
    byte[] key = masterKeys.get(id);
    if (key == null) {
      throw new ParquetCryptoRuntimeException("Key not found: " + id);
    }
    return key;
  }

  @Override
  public synchronized String wrapKey(byte[] keyBytes, String masterKeyIdentifier) throws KeyAccessDeniedException {
    byte[] aad = masterKeyIdentifier.getBytes(StandardCharsets.UTF_8);
    return KeyToolkit.encryptKeyLocally(keyBytes, masterKey(masterKeyIdentifier), aad);
  }

  @Override
  public synchronized byte[] unwrapKey(String wrappedKey, String masterKeyIdentifier) throws KeyAccessDeniedException {
    byte[] aad = masterKeyIdentifier.getBytes(StandardCharsets.UTF_8);
    return KeyToolkit.decryptKeyLocally(wrappedKey, masterKey(masterKeyIdentifier), aad);
  }
}
